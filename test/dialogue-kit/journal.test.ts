// The execution journal a dialogue stage replays after a kill: a line torn by the kill is skipped, and
// the runs appended after it are still read back on the next open.
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ExecutionJournal, type JournaledRun, runKey } from "../../stages/dialogue-kit/journal.js";
import { tempDir } from "../support/runner-kit.js";

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
