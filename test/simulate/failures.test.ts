// A dialogue that cannot be finished for an operational reason is recorded as failed with its reason,
// the rest of the run goes on, and the next run retries it, paying for no call twice: a model that
// answers 500 for one record, and a sandbox that is down for one language.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDialogue } from "../../pipeline/dialogue.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import type { CodeRunner, RunCodeResponse } from "../../pipeline/sandbox/types.js";
import { filterRecord, runnerFor } from "../dialogue-kit/kit.js";
import { caseOf, partOf, scriptedReply } from "../dialogue-kit/script.js";
import { testConfig } from "../sandbox/helpers.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const sandbox = new EmbeddedSandbox(testConfig({ workers: 2 }));
let modelDown = true;
let goDown = true;
// the sandbox answers every Go program with an error while `goDown`, as a crashed worker would
const flaky: CodeRunner = {
  run: (request, options) =>
    goDown && request.language === "go"
      ? Promise.resolve({
          status: "SandboxError",
          message: "worker lost",
          compile_result: null,
          run_result: null,
          files: {},
        } as RunCodeResponse)
      : sandbox.run(request, options),
  close: async () => {},
};
let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer({
    fallback: scriptedReply,
    fault: (r) =>
      modelDown && caseOf(r) === "py-works" && partOf(r) === "weak"
        ? { type: "status", status: 500, message: "the model is overloaded" }
        : undefined,
  });
});
afterAll(async () => {
  await server.close();
  await sandbox.close();
});

const RECORDS = [
  filterRecord("f:model", "py-works", "python", "Sum a list."),
  filterRecord("f:sandbox", "go-prose", "go", "Multiply two numbers."),
  filterRecord("f:fine", "js-fixed", "javascript", "Double a number."),
];
const STAGE = "  simulate:\n    execution: {run_timeout_s: 2, sandbox_attempts: 2}\n";

describe("simulate failures", () => {
  it("records a model error and a sandbox outage as failed with their reasons, then retries them", async () => {
    const dir = tempDir("cf-simulate-fail-");
    const first = runnerFor(dir, () => RECORDS, { url: server.url, sandbox: flaky, stages: STAGE });
    const failed = await first.runner.run(["simulate"]).then(
      () => undefined,
      (error: Error) => error,
    );
    await first.close();
    expect(failed?.message).toMatch(/simulate: 2 records failed/);
    expect(failed?.message).toMatch(/sandbox-error/);
    expect(failed?.message).toMatch(/llm-/);
    const store = first.runner.store("simulate");
    expect(
      (await collect(store.read())).map((r) => (r as unknown as { sources: string[] }).sources[0]),
    ).toEqual(["f:fine"]);
    expect(await collect(store.read({ rejects: true }))).toEqual([]);

    modelDown = false;
    goDown = false;
    const answeredBefore = new Set(server.answered.keys());
    server.reset();
    const second = runnerFor(dir, () => RECORDS, { url: server.url, sandbox: flaky, stages: STAGE });
    await second.runner.run(["simulate"]);
    await second.close();
    expect(second.runner.status("simulate").state).toBe("complete");
    const dialogues = (await collect(second.runner.store("simulate").read())).map((r) => {
      const parsed = parseDialogue(r);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed));
      return parsed.dialogue;
    });
    expect(dialogues.map((d) => d.sources[0]).sort()).toEqual(["f:fine", "f:model", "f:sandbox"]);
    expect(dialogues.find((d) => d.sources[0] === "f:sandbox")!.messages[3]!.content).toBe(
      "Execution result: \n42",
    );
    // the retry sends no request the first run had an answer to: the cache answers them
    expect(server.requests.filter((r) => answeredBefore.has(r.key))).toEqual([]);
    expect(server.requests.some((r) => caseOf(r) === "js-fixed")).toBe(false);
  });
});
