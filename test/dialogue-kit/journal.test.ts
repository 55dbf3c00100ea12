// The execution journal a dialogue stage replays after a kill: a line torn by the kill is skipped, and
// the runs appended after it are still read back on the next open. Each run keeps what the sandbox ran
// for it, and a record that replays it after a reopen counts that with itself, once.
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_FEEDBACK_TEMPLATE } from "../../pipeline/execution/index.js";
import { meteredRunner } from "../../pipeline/sandbox/metered.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import { SandboxMeter } from "../../pipeline/usage.js";
import { Executor } from "../../stages/dialogue-kit/executor.js";
import { ExecutionJournal, type JournaledRun, runKey } from "../../stages/dialogue-kit/journal.js";
import { echoResponse } from "../support/echo-runner.js";
import { tempDir } from "../support/temp-dir.js";

const run = (feedback: string): JournaledRun => ({
  status: "success",
  exitCode: 0,
  signal: null,
  timeS: 0.1,
  truncated: false,
  feedback,
  errorTail: "",
});

const journalFile = (dir: string): string => {
  const [sub] = readdirSync(dir);
  const [file] = readdirSync(join(dir, sub!));
  return join(dir, sub!, file!);
};

describe("the execution journal", () => {
  it("keeps the runs appended after a line torn by a kill", async () => {
    const dir = tempDir("cf-journal-");
    const journal = new ExecutionJournal(dir);
    const first = await journal.open("r:1");
    await first.put(runKey(["a"]), run("Execution result: \n1"));
    // a kill in the middle of the second append leaves half a line without its newline
    const line = JSON.stringify({ key: runKey(["b"]), run: run("Execution result: \n2") });
    appendFileSync(journalFile(dir), line.slice(0, line.length / 2));

    const resumed = await journal.open("r:1");
    expect(resumed.get(runKey(["a"]))?.feedback).toBe("Execution result: \n1");
    expect(resumed.get(runKey(["b"]))).toBeUndefined();
    await resumed.put(runKey(["b"]), run("Execution result: \n2 again"));

    const again = await journal.open("r:1");
    expect(again.get(runKey(["a"]))?.feedback).toBe("Execution result: \n1");
    expect(again.get(runKey(["b"]))?.feedback).toBe("Execution result: \n2 again");
    expect(readFileSync(journalFile(dir), "utf8").endsWith("\n")).toBe(true);
  });

  it("reads a journal that holds nothing but a torn line", async () => {
    const dir = tempDir("cf-journal-");
    const journal = new ExecutionJournal(dir);
    await (await journal.open("r:2")).put(runKey(["x"]), run("x"));
    const file = journalFile(dir);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, 10));
    const resumed = await journal.open("r:2");
    expect(resumed.get(runKey(["x"]))).toBeUndefined();
    await resumed.put(runKey(["x"]), run("y"));
    expect((await journal.open("r:2")).get(runKey(["x"]))?.feedback).toBe("y");
  });

  it("appends after its directory was removed under it (it makes each directory once, not per run)", async () => {
    const dir = tempDir("cf-journal-");
    const journal = new ExecutionJournal(dir);
    const record = await journal.open("r:3");
    await record.put(runKey(["a"]), run("a"));
    rmSync(dir, { recursive: true, force: true });
    await record.put(runKey(["b"]), run("b"));
    const resumed = await journal.open("r:3");
    expect(resumed.get(runKey(["a"]))).toBeUndefined();
    expect(resumed.get(runKey(["b"]))?.feedback).toBe("b");
  });
});

describe("the sandbox programs behind journaled runs", () => {
  it("are kept with each run and handed to the first replay after a reopen only; a damaged cost counts nothing", async () => {
    const dir = tempDir("cf-journal-");
    const journal = new ExecutionJournal(dir);
    const first = await journal.open("r:4");
    await first.put(runKey(["a"]), run("a"), { runs: 1, busyMs: 40 });
    await first.put(runKey(["b"]), run("b"));
    // made by this record: counted as it ran, not again
    expect(first.replayCost(runKey(["a"]))).toBeUndefined();
    appendFileSync(
      journalFile(dir),
      `${JSON.stringify({ key: runKey(["c"]), run: run("c"), x: { runs: -1, busyMs: 5 } })}\n`,
    );

    const again = await journal.open("r:4");
    expect(again.replayCost(runKey(["a"]))).toEqual({ runs: 1, busyMs: 40 });
    expect(again.replayCost(runKey(["a"]))).toBeUndefined();
    expect(again.replayCost(runKey(["b"]))).toBeUndefined();
    expect(again.get(runKey(["c"]))?.feedback).toBe("c");
    expect(again.replayCost(runKey(["c"]))).toBeUndefined();
  });

  it("count with the record that replays them, as the record that ran them counted, once per record", async () => {
    const journal = new ExecutionJournal(tempDir("cf-journal-"));
    let served = 0;
    const sandbox: CodeRunner = {
      run: async (request) => {
        served++;
        return echoResponse(request, 0.25);
      },
      close: async () => {},
    };
    const executor = new Executor(sandbox, 2, { sandbox_attempts: 1 }, DEFAULT_FEEDBACK_TEMPLATE);
    const program = { code: "print(1)", lang: "python" as const, context: ["q"] };
    /** one attempt at the record: its own sandbox face and journal, what it counted */
    const attempt = async (times: number) => {
      const counted = new SandboxMeter();
      const face = executor.using(meteredRunner(sandbox, { runs: counted }));
      const records = await journal.open("r:5");
      for (let i = 0; i < times; i++) await face.run(records, program);
      return counted.totals;
    };
    // the run that paid: one program, asked for twice (the second time from the journal)
    expect(await attempt(2)).toEqual({ runs: 1, busyMs: 250 });
    expect(served).toBe(1);
    // redone after a kill: replayed, counted as before, once however often it is asked for
    expect(await attempt(2)).toEqual({ runs: 1, busyMs: 250 });
    expect(served).toBe(1);
  });
});
