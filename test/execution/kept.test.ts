// The sandbox results a stage keeps (a dialogue's runs per record, leetcode's verdicts), replayed after
// a kill: each process appends to a segment of its own and reads every segment; a line torn by the
// kill, or one that is not an entry, costs that one result and nothing else, and the results appended
// after it (by the next process) are still read back. A new `KeptResults` on the same dir is what the
// next process (or another shard) sees.
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_FEEDBACK_TEMPLATE } from "../../pipeline/execution/index.js";
import { KeptResults, resultKey } from "../../pipeline/execution/kept.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import { Executor } from "../../stages/dialogue-kit/executor.js";
import type { JournaledRun } from "../../stages/dialogue-kit/journal.js";
import { echoResponse } from "../support/echo-runner.js";
import { tempDir } from "../support/temp-dir.js";

type Value = { text: string };
const store = (dir: string) => new KeptResults<Value>(dir);
const v = (text: string): Value => ({ text });

/** the dir's segments, oldest first */
const segments = (dir: string): string[] =>
  readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => join(dir, name));

/** a segment line as a process appends it */
const line = (group: string, key: string, value: unknown) =>
  `${JSON.stringify(group)}\t${JSON.stringify({ k: key, v: value })}\n`;

describe("kept sandbox results", () => {
  it("keep the results appended after a line torn by a kill (a multi-byte character cut too)", () => {
    const dir = tempDir("cf-kept-");
    store(dir).open("r:1").put("a", v("1"));
    // a kill in the middle of the second append leaves part of a line without its newline
    const torn = Buffer.from(line("r:1", "b", v("√x")));
    appendFileSync(segments(dir)[0]!, torn.subarray(0, torn.indexOf(Buffer.from("√")) + 1));

    const resumed = store(dir).open("r:1");
    expect(resumed.get("a")).toEqual(v("1"));
    expect(resumed.get("b")).toBeUndefined();
    resumed.put("b", v("2 again"));
    // the next process wrote a segment of its own: nothing glued onto the torn line
    expect(segments(dir)).toHaveLength(2);
    expect(readFileSync(segments(dir)[1]!, "utf8").endsWith("\n")).toBe(true);

    const again = store(dir).open("r:1");
    expect(again.get("a")).toEqual(v("1"));
    expect(again.get("b")).toEqual(v("2 again"));
  });

  it("read a dir that holds nothing but a torn line", () => {
    const dir = tempDir("cf-kept-");
    store(dir).open("r:2").put("x", v("x"));
    const [file] = segments(dir);
    writeFileSync(file!, readFileSync(file!, "utf8").slice(0, 10));
    const resumed = store(dir).open("r:2");
    expect(resumed.get("x")).toBeUndefined();
    resumed.put("x", v("y"));
    expect(store(dir).open("r:2").get("x")).toEqual(v("y"));
  });

  it("skip lines that are not entries (not JSON, null, a number, no group) instead of failing the run", () => {
    const dir = tempDir("cf-kept-");
    store(dir).open("").put("a", v("a"));
    appendFileSync(
      segments(dir)[0]!,
      `not json at all\n""\tnull\n""\t42\n42\t{"k":"c","v":{"text":"c"}}\n""\t{"k":"d"}\n${line("", "b", v("b"))}`,
    );
    const kept = store(dir).open("");
    expect([kept.get("a"), kept.get("b"), kept.get("c"), kept.get("d")]).toEqual([
      v("a"),
      v("b"),
      undefined,
      undefined,
    ]);
  });

  it("append after their directory was removed under them", () => {
    const dir = tempDir("cf-kept-");
    const record = store(dir).open("r:3");
    record.put("a", v("a"));
    rmSync(dir, { recursive: true, force: true });
    record.put("b", v("b"));
    const resumed = store(dir).open("r:3");
    expect(resumed.get("a")).toBeUndefined();
    expect(resumed.get("b")).toEqual(v("b"));
  });

  it("give each group its own results, whichever process (or shard) wrote them; a file a process, not a group", () => {
    const dir = tempDir("cf-kept-");
    const shard1 = store(dir);
    const shard2 = store(dir);
    // the same key in two records (the same conversation and code) stays apart
    shard1.open("r:6").put("same", v("six"));
    shard2.open("r:7").put("same", v("seven"));
    shard1.open("r:8").put("other", v("eight"));
    expect(segments(dir)).toHaveLength(2);
    const next = store(dir);
    expect(next.open("r:6").get("same")).toEqual(v("six"));
    expect(next.open("r:7").get("same")).toEqual(v("seven"));
    expect(next.open("r:8").get("other")).toEqual(v("eight"));
    expect(next.open("r:9").get("same")).toBeUndefined();
    // a group reopened in the process that wrote it sees its results too (a retried record)
    expect(shard1.open("r:6").get("same")).toEqual(v("six"));
    // a later line for a key wins (segments of several processes are ordered by their clocks, which
    // two machines, or a clock stepped back, may not agree on: one segment's order is what is pinned)
    shard1.open("r:6").put("same", v("six again"));
    expect(store(dir).open("r:6").get("same")).toEqual(v("six again"));
  });

  it("read back results of any text, in the process that wrote them and the next: they index bytes, not characters", () => {
    const dir = tempDir("cf-kept-");
    const kept = store(dir);
    const texts = ["naïve café ✓", "日本語の出力\n\ttab", "😀 emoji", "plain"];
    for (const [i, text] of texts.entries()) kept.open(`r:ü${i}`).put(resultKey([i]), v(text));
    for (const reader of [kept, store(dir)])
      for (const [i, text] of texts.entries())
        expect(reader.open(`r:ü${i}`).get(resultKey([i]))).toEqual(v(text));
  });

  it("forget the results of a segment removed after it was indexed (a purge), and go on", () => {
    const dir = tempDir("cf-kept-");
    store(dir).open("r:11").put("a", v("a"));
    const next = store(dir);
    next.open("r:12"); // indexes the dir
    for (const file of segments(dir)) rmSync(file);
    const record = next.open("r:11");
    expect(record.get("a")).toBeUndefined();
    record.put("a", v("again"));
    expect(store(dir).open("r:11").get("a")).toEqual(v("again"));
  });

  it("write nothing until a result is put (a dry run reads them)", () => {
    const dir = join(tempDir("cf-kept-"), "verdicts");
    expect(store(dir).open("").get("a")).toBeUndefined();
    expect(() => readdirSync(dir)).toThrow();
  });
});

describe("a dialogue's runs", () => {
  it("are replayed by the record redone after a kill: the sandbox runs each program once", async () => {
    const dir = tempDir("cf-kept-");
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
    /** one attempt at the record, by a process of its own: the runs it got */
    const attempt = async () => {
      const journal = new KeptResults<JournaledRun>(dir).open("r:5");
      return [await executor.run(journal, program), await executor.run(journal, program)];
    };
    const first = await attempt();
    // asked for twice, run once: the second time from the journal
    expect(served).toBe(1);
    expect(first[1]).toEqual(first[0]);
    // redone after a kill: replayed, not run again
    expect(await attempt()).toEqual(first);
    expect(served).toBe(1);
  });
});
