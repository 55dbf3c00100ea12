// The execution journal a dialogue stage replays after a kill: each process appends to a segment of
// its own and reads every segment; a line torn by the kill is skipped, and the runs appended after it
// (by the next process) are still read back. Each run keeps what the sandbox ran for it, and a record
// that replays it after a reopen counts that with itself, once. A new `ExecutionJournal` on the same
// dir is what the next process (or another shard) sees.
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** the dir's segments, oldest first */
const segments = (dir: string): string[] =>
  readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => join(dir, name));

/** a segment line as a process appends it */
const line = (recordId: string, entry: object) => `${JSON.stringify(recordId)}\t${JSON.stringify(entry)}\n`;

describe("the execution journal", () => {
  it("keeps the runs appended after a line torn by a kill", async () => {
    const dir = tempDir("cf-journal-");
    const first = await new ExecutionJournal(dir).open("r:1");
    await first.put(runKey(["a"]), run("Execution result: \n1"));
    // a kill in the middle of the second append leaves half a line without its newline
    const torn = line("r:1", { key: runKey(["b"]), run: run("Execution result: \n2") });
    appendFileSync(segments(dir)[0]!, torn.slice(0, torn.length / 2));

    const resumed = await new ExecutionJournal(dir).open("r:1");
    expect(resumed.get(runKey(["a"]))?.feedback).toBe("Execution result: \n1");
    expect(resumed.get(runKey(["b"]))).toBeUndefined();
    await resumed.put(runKey(["b"]), run("Execution result: \n2 again"));
    // the next process wrote a segment of its own: nothing glued onto the torn line
    expect(segments(dir)).toHaveLength(2);
    expect(readFileSync(segments(dir)[1]!, "utf8").endsWith("\n")).toBe(true);

    const again = await new ExecutionJournal(dir).open("r:1");
    expect(again.get(runKey(["a"]))?.feedback).toBe("Execution result: \n1");
    expect(again.get(runKey(["b"]))?.feedback).toBe("Execution result: \n2 again");
  });

  it("reads a journal that holds nothing but a torn line", async () => {
    const dir = tempDir("cf-journal-");
    await (await new ExecutionJournal(dir).open("r:2")).put(runKey(["x"]), run("x"));
    const [file] = segments(dir);
    writeFileSync(file!, readFileSync(file!, "utf8").slice(0, 10));
    const resumed = await new ExecutionJournal(dir).open("r:2");
    expect(resumed.get(runKey(["x"]))).toBeUndefined();
    await resumed.put(runKey(["x"]), run("y"));
    expect((await new ExecutionJournal(dir).open("r:2")).get(runKey(["x"]))?.feedback).toBe("y");
  });

  it("appends after its directory was removed under it", async () => {
    const dir = tempDir("cf-journal-");
    const record = await new ExecutionJournal(dir).open("r:3");
    await record.put(runKey(["a"]), run("a"));
    rmSync(dir, { recursive: true, force: true });
    await record.put(runKey(["b"]), run("b"));
    const resumed = await new ExecutionJournal(dir).open("r:3");
    expect(resumed.get(runKey(["a"]))).toBeUndefined();
    expect(resumed.get(runKey(["b"]))?.feedback).toBe("b");
  });

  it("gives each record its own runs, whichever process (or shard) wrote them; a file a process, not a record", async () => {
    const dir = tempDir("cf-journal-");
    const shard1 = new ExecutionJournal(dir);
    const shard2 = new ExecutionJournal(dir);
    // the same run key in two records (the same conversation and code) stays apart
    await (await shard1.open("r:6")).put(runKey(["same"]), run("six"));
    await (await shard2.open("r:7")).put(runKey(["same"]), run("seven"));
    await (await shard1.open("r:8")).put(runKey(["other"]), run("eight"));
    expect(segments(dir)).toHaveLength(2);
    const next = new ExecutionJournal(dir);
    expect((await next.open("r:6")).get(runKey(["same"]))?.feedback).toBe("six");
    expect((await next.open("r:7")).get(runKey(["same"]))?.feedback).toBe("seven");
    expect((await next.open("r:8")).get(runKey(["other"]))?.feedback).toBe("eight");
    expect((await next.open("r:9")).get(runKey(["same"]))).toBeUndefined();
    // a record reopened in the process that wrote it sees its runs too (a retried record)
    expect((await shard1.open("r:6")).get(runKey(["same"]))?.feedback).toBe("six");
  });

  it("reads back runs of any text, in the process that wrote them and the next: it indexes bytes, not characters", async () => {
    const dir = tempDir("cf-journal-");
    const journal = new ExecutionJournal(dir);
    const texts = ["naïve café ✓", "日本語の出力\n\ttab", "😀 emoji", "plain"];
    for (const [i, text] of texts.entries())
      await (await journal.open(`r:ü${i}`)).put(runKey([i]), run(text));
    for (const reader of [journal, new ExecutionJournal(dir)])
      for (const [i, text] of texts.entries())
        expect((await reader.open(`r:ü${i}`)).get(runKey([i]))?.feedback).toBe(text);
  });

  it("forgets the runs of a segment removed after it was indexed (a purge), and goes on", async () => {
    const dir = tempDir("cf-journal-");
    await (await new ExecutionJournal(dir).open("r:11")).put(runKey(["a"]), run("a"));
    const next = new ExecutionJournal(dir);
    await next.open("r:12"); // indexes the dir
    for (const file of segments(dir)) rmSync(file);
    const record = await next.open("r:11");
    expect(record.get(runKey(["a"]))).toBeUndefined();
    await record.put(runKey(["a"]), run("again"));
    expect((await new ExecutionJournal(dir).open("r:11")).get(runKey(["a"]))?.feedback).toBe("again");
  });

  it("reads a record's file of the layout before segments, with the programs it kept", async () => {
    const dir = tempDir("cf-journal-");
    const name = createHash("sha1").update("r:10").digest("hex");
    mkdirSync(join(dir, name.slice(0, 2)));
    writeFileSync(
      join(dir, name.slice(0, 2), `${name}.jsonl`),
      `${JSON.stringify({ key: runKey(["old"]), run: run("old"), x: { runs: 1, busyMs: 30 } })}\n`,
    );
    const journal = new ExecutionJournal(dir);
    const record = await journal.open("r:10");
    expect(record.get(runKey(["old"]))?.feedback).toBe("old");
    expect(record.replayCost(runKey(["old"]))).toEqual({ runs: 1, busyMs: 30 });
    await record.put(runKey(["new"]), run("new"));
    const again = await new ExecutionJournal(dir).open("r:10");
    expect(again.get(runKey(["old"]))?.feedback).toBe("old");
    expect(again.get(runKey(["new"]))?.feedback).toBe("new");
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
      segments(dir)[0]!,
      line("r:4", { key: runKey(["c"]), run: run("c"), x: { runs: -1, busyMs: 5 } }),
    );

    for (const again of [await journal.open("r:4"), await new ExecutionJournal(dir).open("r:4")]) {
      expect(again.replayCost(runKey(["a"]))).toEqual({ runs: 1, busyMs: 40 });
      expect(again.replayCost(runKey(["a"]))).toBeUndefined();
      expect(again.replayCost(runKey(["b"]))).toBeUndefined();
    }
    const next = await new ExecutionJournal(dir).open("r:4");
    expect(next.get(runKey(["c"]))?.feedback).toBe("c");
    expect(next.replayCost(runKey(["c"]))).toBeUndefined();
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
      return counted.saved();
    };
    // the run that paid: one program, asked for twice (the second time from the journal)
    expect(await attempt(2)).toEqual({ runs: 1, busyMs: 250 });
    expect(served).toBe(1);
    // redone after a kill: replayed, counted as before, once however often it is asked for
    expect(await attempt(2)).toEqual({ runs: 1, busyMs: 250 });
    expect(served).toBe(1);
  });
});
