// The batch file format: requests split into files within the line and byte limits, one model per
// file, a request no file can hold set apart; results read back by custom_id, and a file that is not
// JSONL refused with its name and line.
import { describe, expect, it } from "vitest";
import {
  type BatchRequest,
  inputLine,
  parseResults,
  splitIntoFiles,
} from "../../pipeline/llm/batch/lines.js";

const request = (i: number, model = "m", size = 10): BatchRequest => ({
  id: i.toString(16).padStart(64, "0"),
  model,
  messages: [{ role: "user", content: "x".repeat(size) }],
  sampling: { temperature: 0 },
});

describe("batch files", () => {
  it("split at max_lines and max_bytes, one model per file, never over either", () => {
    const requests = [
      ...Array.from({ length: 7 }, (_, i) => request(i)),
      request(7, "other"),
      request(8, "m", 5000),
    ];
    const lineBytes = Buffer.byteLength(inputLine(request(0)));
    const { files, tooLarge } = splitIntoFiles(requests, { maxLines: 3, maxBytes: lineBytes * 2 + 1 });
    expect(tooLarge.map((r) => r.id)).toEqual([request(8).id]);
    for (const file of files) {
      expect(file.ids.length).toBeLessThanOrEqual(3);
      expect(Buffer.byteLength(file.text)).toBeLessThanOrEqual(lineBytes * 2 + 1);
      expect(
        new Set(
          file.text
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l).body.model),
        ).size,
      ).toBe(1);
    }
    expect(files.flatMap((f) => f.ids).sort()).toEqual(
      requests
        .slice(0, 8)
        .map((r) => r.id)
        .sort(),
    );
    expect(files.find((f) => f.model === "other")!.ids).toEqual([request(7).id]);
    const line = JSON.parse(inputLine(request(1)));
    expect(line).toMatchObject({ custom_id: request(1).id, method: "POST", url: "/v1/chat/completions" });
    expect(line.body).toEqual({ model: "m", messages: request(1).messages, temperature: 0 });
  });

  it("read answers and failures by custom_id, and name the file and line of one that is not JSON", () => {
    const ok = JSON.stringify({
      custom_id: "a",
      response: {
        status_code: 200,
        body: {
          model: "m",
          choices: [{ message: { content: "hi" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 3, completion_tokens: 1 },
        },
      },
    });
    const failed = JSON.stringify({
      custom_id: "b",
      response: null,
      error: { code: "batch_expired", message: "too late" },
    });
    const refused = JSON.stringify({
      custom_id: "c",
      response: { status_code: 500, body: { error: { message: "boom" } } },
    });
    expect(parseResults(`${ok}\n\n${failed}\n${refused}\n`, "out.jsonl", "m")).toEqual([
      {
        id: "a",
        answer: { content: "hi", model: "m", finishReason: "stop", promptTokens: 3, completionTokens: 1 },
      },
      { id: "b", failure: "batch_expired: too late" },
      { id: "c", failure: "status 500: boom" },
    ]);
    expect(() => parseResults(`${ok}\nnot json\n`, "out.jsonl", "m")).toThrow("out.jsonl:2: not JSON");
    expect(() => parseResults(`{"no": "id"}\n`, "out.jsonl", "m")).toThrow("out.jsonl:1: no custom_id");
  });
});
