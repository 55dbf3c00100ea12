// The correct stage through the runner, against the scripted LLM server and the real sandbox: a
// mistake counts only if it really fails (compile or runtime error, time-out, or a failed check for a
// logical error), the fix only if it runs cleanly (and passes the check); the published dialogue
// carries the ordinary prompt and never mentions the deliberate mistake.
import { describe, expect, it } from "vitest";
import { dialogueStageRun, filterRecord, INTERPRETER, scriptedWorld } from "../dialogue-kit/kit.js";
import { caseOf, partOf } from "../dialogue-kit/script.js";

const world = scriptedWorld();

const RECORDS = [
  filterRecord("c:syntax", "corr-syntax", "python", "Mean of a list."),
  filterRecord("c:logical", "corr-logical", "python", "Mean of a list."),
  filterRecord("c:runs", "corr-runs", "python", "Mean of a list."),
  filterRecord("c:fixfails", "corr-fix-fails", "javascript", "Print a total."),
  filterRecord("c:name", "corr-name", "javascript", "Print a total."),
  filterRecord("c:type", "corr-cpp-type", "cpp", "Print five."),
  filterRecord("c:timeout", "corr-timeout", "python", "Count to ten."),
  filterRecord("c:givesaway", "corr-gives-away", "python", "Print a name."),
  filterRecord("c:comment", "corr-comment", "python", "Mean of a list."),
  filterRecord("c:empty", "corr-empty-analysis", "javascript", "Print six."),
];

const STAGE = "  correct:\n    count: 20\n    execution: {run_timeout_s: 2}\n";

describe("correct", () => {
  const { dialogues, rejects, stats } = dialogueStageRun(world, "correct", RECORDS, STAGE);

  it("keeps a syntax error and its fix, published under the ordinary prompt", () => {
    const d = dialogues.get("c:syntax")!;
    expect(d.method).toBe("code-correction");
    expect(d.messages.map((m) => m.role).join(" ")).toBe(
      "system user assistant user assistant user assistant",
    );
    expect(d.messages[0]!.content).toBe(INTERPRETER);
    expect(d.messages[1]!.content).toBe("Mean of a list. [case:corr-syntax]");
    expect(d.messages[3]!.content).toMatch(/^Execution result: \n[\s\S]*SyntaxError/);
    expect(d.messages[4]!.content).toMatch(/^A parenthesis was missing/);
    expect(d.messages[5]!.content).toBe("Execution result: \n2.0");
    expect(d.meta).toMatchObject({
      error_type: "syntax",
      checked: false,
      mistake: { status: "runtime-error" },
      fixed: { status: "success", exit_code: 0 },
      // why each published answer ended, by its index in messages (validate tags a cut one)
      finish_reasons: { "2": "stop", "4": "stop", "6": "stop" },
    });
    // the error-inducing prompt was used to write the mistake, and appears nowhere in the dialogue
    const prompts = world.server.requests.filter((r) => caseOf(r) === "corr-syntax").map(partOf);
    // the mistake under the error-inducing prompt, then the correction and the analysis under the ordinary one
    expect(prompts).toEqual(["broken", "strong", "strong"]);
    for (const dialogue of dialogues.values()) {
      for (const m of dialogue.messages)
        expect(m.content).not.toMatch(/MUST make mistakes|deliberate|intentional/i);
    }
  });

  it("catches a logical error with the model's own check, and keeps the fix only once it passes it", () => {
    const d = dialogues.get("c:logical")!;
    expect(d.meta).toMatchObject({
      error_type: "logical",
      checked: true,
      mistake: { status: "success", check: { status: "runtime-error" } },
      fixed: { status: "success", check: { status: "success" } },
    });
    expect(d.messages[3]!.content).toMatch(/assert mean\(\[2, 4\]\) == 3[\s\S]*AssertionError/);
    expect(d.messages[5]!.content).toBe("Execution result: \n3.0");
    const check = world.server.requests.find((r) => caseOf(r) === "corr-logical" && partOf(r) === "check")!;
    // written in its own conversation, without the error-inducing prompt
    expect(check.body.messages).toHaveLength(1);
    expect(check.body.messages[0]!.content).toContain("return sum(xs)");
  });

  it("drops a 'mistake' that runs and passes its check, and a fix that still fails", () => {
    expect(rejects.get("c:runs")).toMatchObject({ reason: "mistake-runs" });
    expect(rejects.get("c:fixfails")).toMatchObject({ reason: "fix-fails" });
    expect(rejects.get("c:fixfails")!.detail).toContain("totall is not defined");
    expect(rejects.get("c:givesaway")).toMatchObject({ reason: "mentions-mistake" });
    // a comment labelling the mistake would be published twice: in the answer and in the traceback
    expect(rejects.get("c:comment")).toMatchObject({ reason: "mentions-mistake" });
    expect(rejects.get("c:comment")!.detail).toContain("Syntax Error: missing closing parenthesis");
    for (const id of ["c:runs", "c:fixfails", "c:givesaway", "c:comment"])
      expect(dialogues.has(id)).toBe(false);
  });

  it("names the error observed in JavaScript, C++ and a time-out", () => {
    expect(dialogues.get("c:name")!.meta.error_type).toBe("name");
    expect(dialogues.get("c:name")!.lang).toBe("javascript");
    expect(dialogues.get("c:type")!.meta.error_type).toBe("type");
    expect(dialogues.get("c:type")!.messages[3]!.content).toMatch(/invalid conversion/);
    const slow = dialogues.get("c:timeout")!;
    expect(slow.meta.error_type).toBe("timeout");
    expect(slow.messages[3]!.content).toBe("Execution result: \nExecution timed out");
  });

  it("sums up the mix of mistakes next to the paper's five kinds", () => {
    expect(stats["code-correction"]).toMatchObject({
      dialogues: 5,
      turns: 15,
      turns_per_dialogue: 3,
      paper: { dialogues: 500, turns_per_dialogue: 2.4 },
    });
    expect(stats.error_types).toEqual({ syntax: 1, logical: 1, type: 1, name: 1, timeout: 1, other: 0 });
    expect(stats.rejects).toEqual({
      "mistake-runs": 1,
      "fix-fails": 1,
      "mentions-mistake": 2,
      // an empty analysis is rejected, not a record failed for ever (the cache replays it)
      "empty-answer": 1,
    });
    expect(stats.checked).toBe(1);
  });
});
