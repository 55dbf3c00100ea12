// The simulate stage through the runner, against the scripted LLM server and the real sandbox, in
// python, javascript, cpp and go: dialogue structure, execution results as their own turns, the
// feedback texts (never the JSON), the iteration cap, rejects with reasons, the summary.
import { describe, expect, it } from "vitest";
import { DEFAULT_FEEDBACK_TEMPLATE } from "../../pipeline/execution/index.js";
import { dialogueStageRun, filterRecord, INTERPRETER, scriptedWorld } from "../dialogue-kit/kit.js";
import { caseOf, partOf, REMINDER_MARK } from "../dialogue-kit/script.js";

const world = scriptedWorld();

const RECORDS = [
  filterRecord("t:works", "py-works", "python", "Sum a list."),
  filterRecord("t:js", "js-fixed", "javascript", "Double a number."),
  filterRecord("t:cpp", "cpp-never", "cpp", "Print a value."),
  filterRecord("t:go", "go-prose", "go", "Multiply two numbers."),
  filterRecord("t:badjson", "py-badjson", "python", "Say hello."),
  filterRecord("t:nocode", "py-nocode", "python", "Add up numbers."),
  filterRecord("t:timeout", "py-timeout", "python", "Loop three times."),
  filterRecord("t:long", "py-long", "python", "Print numbers."),
  filterRecord("t:notebook", "py-notebook", "python", "Sum two numbers."),
  filterRecord("t:restless", "py-restless", "python", "Print a version."),
  filterRecord("t:empty", "py-empty", "python", "Print ready."),
  // not simulated: html is not run by the sandbox
  filterRecord("t:html", "py-works", "html", "Make a page."),
];

const STAGE = "  simulate:\n    execution: {run_timeout_s: 2}\n";

describe("simulate", () => {
  const { dialogues, rejects, stats } = dialogueStageRun(world, "simulate", RECORDS, STAGE);

  it("runs working code, shows its output as its own turn, then the feedback text and the refinement", () => {
    const d = dialogues.get("t:works")!;
    expect(d.method).toBe("interaction-simulation");
    expect(d.lang).toBe("python");
    expect(d.messages.map((m) => m.role).join(" ")).toBe(
      "system user assistant user assistant user assistant user assistant",
    );
    expect(d.messages[0]!.content).toBe(INTERPRETER);
    expect(d.messages[3]!.content).toBe("Execution result: \n6");
    // only the feedback text is the user's turn, never the JSON around it
    expect(d.messages[5]!.content).toBe(
      "Please add a docstring and comments so the function is easier to follow.",
    );
    expect(d.messages[7]!.content).toBe("Execution result: \n9");
    expect(d.meta).toMatchObject({
      passed: true,
      capped: false,
      ends_unrun: false,
      iterations: 1,
      category: "code-clarity-and-documentation",
      models: { weak: "test-weak", strong: "test-strong" },
    });
    const executions = d.meta.executions as { status: string; turn: number; by: string; exit_code: number }[];
    expect(executions.map((e) => [e.status, e.turn, e.by, e.exit_code])).toEqual([
      ["success", 3, "weak", 0],
      ["success", 7, "strong", 0],
    ]);
    const feedback = d.meta.feedback as Record<string, unknown>[];
    expect(feedback[0]).toMatchObject({
      round: 1,
      satisfied: "It sums the list.",
      not_satisfied: "The function has no docstring or comments.",
      category_source: "words",
      reminded: false,
    });
  });

  it("feeds a JavaScript error back, and the strong model's fix runs; reads JSON in prose with a trailing comma", () => {
    const d = dialogues.get("t:js")!;
    expect(d.lang).toBe("javascript");
    expect(d.messages[3]!.content).toMatch(
      /^Execution result: \n[\s\S]*ReferenceError: doubel is not defined/,
    );
    expect(d.messages[5]!.content).toBe("Execution result: \n42");
    expect(d.messages[7]!.content).toBe("Could you validate that the input is a number before doubling it?");
    expect(d.messages[9]!.content).toBe("Execution result: \n42");
    expect(d.meta).toMatchObject({ passed: true, iterations: 2, category: "functionality-enhancements" });
    expect(d.messages.some((m) => m.content.includes('"not_satisfied"'))).toBe(false);
  });

  it("ends a C++ bug that is never fixed at the cap without paying for an answer nobody would run", () => {
    expect(dialogues.has("t:cpp")).toBe(false);
    const reject = rejects.get("t:cpp")!;
    expect(reject.reason).toBe("capped-failing");
    expect(reject.detail).toMatch(
      /still failed \(compile-error\) after 3 runs in the execution-feedback phase/,
    );
    // the partial dialogue ends on the third failure, shown; nothing after it
    const partial = (reject.record as { dialogue: { messages: { content: string }[] } }).dialogue.messages;
    expect(partial).toHaveLength(8);
    expect(partial.at(-1)!.content).toMatch(/^Execution result: \n[\s\S]*value2. was not declared/);
    const asked = world.server.requests.filter((r) => caseOf(r) === "cpp-never");
    // the weak answer, then the strong model after the first and the second result only
    expect(asked.filter((r) => partOf(r) === "strong").map((r) => r.body.messages.length)).toEqual([4, 6]);
    expect(asked.some((r) => partOf(r) === "reviewer")).toBe(false);
  });

  it("after clean runs up to the cap, ends on the unrun answer instead of starting the human feedback", () => {
    const d = dialogues.get("t:restless")!;
    expect(d.messages).toHaveLength(9);
    expect(d.messages.at(-1)!.content).toContain("version 3");
    expect(d.meta).toMatchObject({ passed: false, capped: true, ends_unrun: true, feedback_rounds: 0 });
    expect(world.server.requests.some((r) => caseOf(r) === "py-restless" && partOf(r) === "reviewer")).toBe(
      false,
    );
    // every other answer ran and was shown: only the last one is left to validate
    const results = d.messages.filter((m) => m.content.startsWith("Execution result"));
    expect(results.map((m) => m.content)).toEqual([0, 1, 2].map((n) => `Execution result: \nversion ${n}`));
  });

  it("rejects a dialogue whose model answered with nothing, instead of failing the record for ever", () => {
    expect(dialogues.has("t:empty")).toBe(false);
    const reject = rejects.get("t:empty")!;
    expect(reject.reason).toBe("empty-answer");
    expect(reject.detail).toBe("the strong model answered with nothing (finish_reason: stop)");
  });

  it("keeps why each assistant turn ended", () => {
    const d = dialogues.get("t:works")!;
    const reasons = d.meta.finish_reasons as Record<string, string>;
    const assistantTurns = d.messages.flatMap((m, i) => (m.role === "assistant" ? [String(i)] : []));
    expect(Object.keys(reasons).sort()).toEqual(assistantTurns.sort());
    expect(Object.values(reasons).every((r) => r === "stop")).toBe(true);
  });

  it("compiles and runs Go, reading feedback JSON wrapped in prose", () => {
    const d = dialogues.get("t:go")!;
    expect(d.lang).toBe("go");
    expect(d.messages[3]!.content).toBe("Execution result: \n42");
    expect(d.messages[5]!.content).toBe("Can you make it more efficient for larger inputs?");
    expect(d.meta).toMatchObject({ passed: true, category: "efficiency" });
  });

  it("asks once more on invalid JSON, then rejects the record with both answers", () => {
    expect(dialogues.has("t:badjson")).toBe(false);
    const reject = rejects.get("t:badjson")!;
    expect(reject.reason).toBe("unparseable-feedback");
    expect(reject.detail).toContain("I think the code is fine overall.");
    expect(reject.detail).toContain("Still fine, nothing to add.");
    const asked = world.server.requests.filter((r) => caseOf(r) === "py-badjson" && partOf(r) === "reviewer");
    expect(asked).toHaveLength(2);
    expect(asked[1]!.body.messages.at(-1)!.content.startsWith(REMINDER_MARK)).toBe(true);
  });

  it("asks for code when the first answer has none, then runs what the strong model writes", () => {
    const d = dialogues.get("t:nocode")!;
    expect(d.messages[2]!.content).toMatch(/^You could loop/);
    expect(d.messages[3]!.content).toBe("Please write the code so I can run it.");
    expect(d.messages[5]!.content).toBe("Execution result: \n6");
    expect(d.meta).toMatchObject({ iterations: 0, passed: true });
  });

  it("says a time-out as the paper does, and cuts long output to its head and tail", () => {
    const slow = dialogues.get("t:timeout")!;
    expect(slow.messages[3]!.content).toBe("Execution result: \nExecution timed out");
    expect(slow.messages[5]!.content).toBe("Execution result: \nfinished");
    expect((slow.meta.executions as { status: string }[])[0]!.status).toBe("timeout");
    const long = dialogues.get("t:long")!.messages[3]!.content;
    expect(long.startsWith("Execution result: \n0\n1\n2\n")).toBe(true);
    expect(long).toMatch(/\[\.\.\. [\d,]+ characters omitted \.\.\.\]/);
    expect(long.endsWith("2998\n2999")).toBe(true);
    expect(long.length).toBeLessThan(2200);
  });

  it("says a run that printed nothing, and runs later Python cells in the session of the earlier ones", () => {
    const d = dialogues.get("t:notebook")!;
    expect(d.messages[3]!.content).toBe(`Execution result: \n${DEFAULT_FEEDBACK_TEMPLATE.no_output}`);
    // the second cell calls the function the first one defined; only its own output is shown
    expect(d.messages[5]!.content).toBe("Execution result: \n3");
    expect(d.messages[7]!.content).toBe("Please print the total with a label.");
    expect(d.messages[9]!.content).toBe("Execution result: \ntotal: 9");
    expect(d.meta).toMatchObject({ passed: true, iterations: 2, ends_unrun: false });
  });

  it("simulates only languages the sandbox runs, and sums up next to the paper", () => {
    expect([...dialogues.keys()].sort()).toEqual([
      "t:go",
      "t:js",
      "t:long",
      "t:nocode",
      "t:notebook",
      "t:restless",
      "t:timeout",
      "t:works",
    ]);
    expect(world.server.requests.some((r) => JSON.stringify(r.body).includes("Make a page."))).toBe(false);
    expect(stats["interaction-simulation"]).toMatchObject({
      dialogues: 8,
      paper: { dialogues: 51_000, turns_per_dialogue: 3 },
    });
    expect(stats.passing).toBe(7);
    expect(stats.capped).toBe(1);
    expect(stats.ends_unrun).toBe(1);
    expect(stats.rejects).toEqual({ "unparseable-feedback": 1, "capped-failing": 1, "empty-answer": 1 });
    // the reviewer names no category: each is read from the feedback's words
    expect(stats.feedback_categories).toEqual({
      "syntax-and-formatting": 1,
      efficiency: 1,
      "functionality-enhancements": 1,
      "code-clarity-and-documentation": 2,
      "bug-identification": 0,
      "security-improvements": 0,
      "compatibility-and-testing": 0,
      "resource-optimization": 0,
      scalability: 0,
      "adherence-to-best-practices": 0,
      unclassified: 2,
    });
  });
});
