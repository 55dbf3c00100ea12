import { describe, expect, it } from "vitest";
import { type RecordView, terminalSafe, viewText } from "../../pipeline/review/view.js";

describe("a record as text for a terminal", () => {
  it("shows control characters as \\xNN, so model-written escape sequences cannot drive the terminal", () => {
    expect(terminalSafe("a\u001b[2J\u001b]0;owned\u0007b\r\n\tc\u009bd")).toBe(
      "a\\x1b[2J\\x1b]0;owned\\x07b\\x0d\n\tc\\x9bd",
    );
  });

  it("applies to every line of `show`: messages, provenance and rejects", () => {
    const view: RecordView = {
      stage: "validate",
      kind: "o",
      id: "pack-1",
      state: "complete",
      reject: { reason: "bad\u001b[31m" },
      messages: [{ role: "assistant", content: "print('\u001b[2J')", blocks: [] }],
      provenance: { method: "x\u001b]8;;http://e.example\u0007" },
      links: [],
      hash: "h",
      marks: [],
    };
    const text = viewText(view).join("\n");
    expect(text).not.toMatch(/[\u001b\u0007]/);
    expect(text).toContain("print('\\x1b[2J')");
  });
});
