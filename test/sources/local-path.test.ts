// A local source's `path`: a file, a directory or a glob; and the rows of such files that cannot be
// read (a huge row, a huge dialogue, broken UTF-8), each rejected with its reason without holding the file.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { matchLocalPath } from "../../pipeline/hub/local-files.js";
import { formatOfName, readRows } from "../../pipeline/readers/index.js";
import { normalizeRow, type RawRowRecord } from "../../stages/normalize.js";
import { detectChatKeys } from "../../stages/sources/chat.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("local-path-");
const isData = (name: string) => formatOfName(name) !== undefined;

describe("a local source's path", () => {
  it("names one file, every data file under a directory, or a glob's matches, in a fixed order", () => {
    mkdirSync(path.join(dir, "set", "b", "deep"), { recursive: true });
    mkdirSync(path.join(dir, "set", ".cache"), { recursive: true });
    for (const name of [
      "a.jsonl",
      "b/c.json",
      "b/deep/d.parquet",
      "b/e.jsonl.gz",
      "notes.md",
      ".cache/x.jsonl",
    ]) {
      writeFileSync(path.join(dir, "set", name), "");
    }
    const under = (files: string[]) => files.map((f) => path.relative(path.join(dir, "set"), f));
    expect(under(matchLocalPath(path.join(dir, "set", "a.jsonl"), isData))).toEqual(["a.jsonl"]);
    expect(under(matchLocalPath(path.join(dir, "set"), isData))).toEqual([
      "a.jsonl",
      "b/c.json",
      "b/deep/d.parquet",
      "b/e.jsonl.gz",
    ]);
    expect(under(matchLocalPath(path.join(dir, "set", "*.jsonl"), isData))).toEqual(["a.jsonl"]);
    expect(under(matchLocalPath(path.join(dir, "set", "**", "*.json*"), isData))).toEqual([
      "a.jsonl",
      "b/c.json",
      "b/e.jsonl.gz",
    ]);
    // relative to the working directory, as a config gives it
    const relative = path.relative(process.cwd(), path.join(dir, "set", "b", "*.json"));
    expect(under(matchLocalPath(relative, isData))).toEqual(["b/c.json"]);
    expect(matchLocalPath(path.join(dir, "set", "*.csv"), isData)).toEqual([]);
    expect(matchLocalPath(path.join(dir, "missing"), isData)).toEqual([]);
    expect(matchLocalPath(path.join(dir, "missing", "*.jsonl"), isData)).toEqual([]);
  });
});

/** Every row of `file` through a chat source's mapping, as normalize reads it: reasons and queries. */
async function chatOutcomes(file: string): Promise<string[]> {
  const mapping: RawRowRecord["mapping"] = { chat: { turns: "each" } };
  const outcomes: string[] = [];
  let keys: ReturnType<typeof detectChatKeys>;
  for await (const row of readRows(file, { maxRowBytes: 1 << 20 })) {
    keys ??= detectChatKeys(row.value, {});
    const record: RawRowRecord = {
      id: `talk:${row.index}`,
      source: "talk",
      resource: "talk",
      mapping,
      chatKeys: keys,
      file: path.basename(file),
      sha256: "0".repeat(64),
      row,
    };
    const outcome = normalizeRow(record);
    outcomes.push(...(outcome.out ?? []).map((o) => o.query as string));
    outcomes.push(...(outcome.rejects ?? []).map((r) => r.reason));
    expect(JSON.stringify(outcome).length).toBeLessThan(10_000);
  }
  return outcomes;
}

describe("bad rows of a local chat file", () => {
  const turn = (role: string, content: string) => ({ role, content });
  const good = (q: string) => JSON.stringify({ messages: [turn("user", q), turn("assistant", "a")] });

  it("rejects a 10 MB row, a 100,000-turn dialogue and broken UTF-8, and reads the rows around them", async () => {
    const huge = JSON.stringify({
      messages: [turn("user", "q"), turn("assistant", "x".repeat(10 * 1024 * 1024))],
    });
    const turns = Array.from({ length: 100_000 }, (_, i) => turn(i % 2 ? "assistant" : "user", "t"));
    const long = JSON.stringify({ messages: turns });
    const broken = Buffer.concat([
      Buffer.from('{"messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}'),
    ]);
    const file = path.join(dir, "bad.jsonl");
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(`${good("first")}\n${huge}\n${long}\n`),
        broken,
        Buffer.from(`\n${good("last")}\n`),
      ]),
    );
    expect(await chatOutcomes(file)).toEqual([
      "first",
      "row-too-large",
      "row-too-large",
      "invalid-utf8",
      "last",
    ]);
  });

  it("reads gzipped JSONL and a JSON array alike", async () => {
    writeFileSync(path.join(dir, "two.jsonl.gz"), gzipSync(`${good("one")}\n${good("two")}\n`));
    writeFileSync(path.join(dir, "two.json"), `[${good("one")},${good("two")}]`);
    expect(await chatOutcomes(path.join(dir, "two.jsonl.gz"))).toEqual(["one", "two"]);
    expect(await chatOutcomes(path.join(dir, "two.json"))).toEqual(["one", "two"]);
  });
});
