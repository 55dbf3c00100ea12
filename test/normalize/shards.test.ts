// The real download and normalize stages, normalize in shards: a shard reads every row but parses
// only its own (test/normalize/normalize.test.ts), and the union of the shards is the one-process run exactly (outputs and rejects, in its order, counts
// and hash), bad rows included: malformed JSON, broken UTF-8 and rows over max_row_bytes are rejected
// in the shard that owns them, and counted the same in every shard.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { shardOfId } from "../../pipeline/runner/shard.js";
import type { Runner } from "../../pipeline/runner.js";
import type { Stage } from "../../pipeline/stage.js";
import { downloadStage } from "../../stages/download.js";
import { normalizeStage } from "../../stages/normalize.js";
import { collect, makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const STAGES = [downloadStage, normalizeStage] as Stage<unknown>[];
const SHARDS = 3;

/** Two sources over three files in the three formats, with every kind of bad row between good ones. */
function writeHub(hub: string): void {
  const big = "x".repeat(800);
  const pair = (i: number) => ({ instruction: `task ${i}`, output: `def f${i}(): return ${i}` });
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    if (i === 5) lines.push('{"instruction": "cut", "output":');
    else if (i === 11) lines.push(JSON.stringify({ instruction: `long ${i}`, output: big }));
    else if (i === 17) lines.push(JSON.stringify({ instruction: " ", output: "empty query" }));
    else if (i === 23) lines.push("", "   ");
    else lines.push(JSON.stringify(pair(i)));
  }
  const alpha = path.join(hub, "o", "alpha");
  mkdirSync(alpha, { recursive: true });
  writeFileSync(
    path.join(alpha, "a1.jsonl"),
    Buffer.concat([
      Buffer.from(`${lines.join("\n")}\n{"instruction": "torn `),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('", "output": "x"}\n'),
    ]),
  );
  const elements = Array.from({ length: 30 }, (_, i) =>
    i === 4
      ? "{not json}"
      : i === 9
        ? JSON.stringify({ instruction: "huge", output: big })
        : JSON.stringify(pair(100 + i)),
  );
  writeFileSync(path.join(alpha, "a2.json"), `[\n${elements.join(",\n")}\n]\ntrailing`);

  const beta = path.join(hub, "o", "beta");
  mkdirSync(beta, { recursive: true });
  const n = 25;
  const text = (s: string) => new Uint8Array(Buffer.from(s));
  const instructions = Array.from({ length: n }, (_, i) =>
    i === 7 ? new Uint8Array([0x64, 0xc3, 0x28]) : text(`question ${i}`),
  );
  const responses = Array.from({ length: n }, (_, i) => text(i === 13 ? big : `answer ${i}`));
  const buffer = parquetWriteBuffer({
    schema: [
      { name: "root", num_children: 2 },
      { name: "instruction", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" },
      { name: "response", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" },
    ],
    columnData: [
      { name: "instruction", data: instructions },
      { name: "response", data: responses },
    ],
    rowGroupSize: 10,
  } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
  writeFileSync(path.join(beta, "b.parquet"), Buffer.from(buffer));
}

function runnerOn(hub: string, dir: string): Runner {
  const yaml = [
    `hub: {endpoint: "file:${hub}"}`,
    "stages:",
    "  download:",
    "    sources:",
    "      - {name: alpha, adapter: evolinstruct, repo: o/alpha, files: [a1.jsonl, a2.json]}",
    "      - {name: beta, adapter: wizardcoder, repo: o/beta, files: [b.parquet]}",
    "  normalize: {max_row_bytes: 600}",
    "",
  ].join("\n");
  return makeRunner(STAGES, { dir, yaml });
}

const idsOf = (records: PipelineRecord[]) => records.map((r) => r.id);

describe("normalize in shards", () => {
  it("make the one-process run exactly, bad rows included, each rejected by the shard that owns it", async () => {
    const dirs = [
      tempDir("cf-normalize-hub-"),
      tempDir("cf-normalize-one-"),
      tempDir("cf-normalize-shards-"),
    ];
    const [hub, one, many] = dirs as [string, string, string];
    writeHub(hub);
    const single = runnerOn(hub, one);
    await single.run(["normalize"]);
    const sharded = runnerOn(hub, many);
    await sharded.run(["download"]);
    for (let index = 0; index < SHARDS; index++) {
      await sharded.run(["normalize"], { shard: { index, count: SHARDS } });
    }

    const outputs = await collect(single.read("normalize"));
    const rejects = await collect(single.read("normalize", { rejects: true }));
    // the rows as the one process numbered them: 40 + 1 + 31 (a trailing bad row) + 25, less 1 blank pair
    expect(outputs.length + rejects.length).toBe(96);
    expect(rejects.map((r) => `${r.id} ${r.reason}`)).toEqual([
      "alpha:000005 malformed-json",
      "alpha:000011 row-too-large",
      "alpha:000017 empty-query",
      "alpha:000039 invalid-utf8",
      "alpha:000044 malformed-json",
      "alpha:000049 row-too-large",
      "alpha:000070 malformed-json",
      "beta:000007 invalid-utf8",
      "beta:000013 row-too-large",
    ]);

    const status = sharded.status("normalize");
    expect(status.state).toBe("complete");
    expect(status.manifest!.counts).toEqual(single.status("normalize").manifest!.counts);
    expect(status.manifest!.outputHash).toBe(single.status("normalize").manifest!.outputHash);
    // the same records in the same order (the merge by input position), rejects included
    expect(await collect(sharded.read("normalize"))).toEqual(outputs);
    expect(await collect(sharded.read("normalize", { rejects: true }))).toEqual(rejects);

    // each bad row is a reject of the one shard that owns it, and each shard processed only its own
    const owners = new Set<number>();
    const readerErrors = new Set(["malformed-json", "invalid-utf8", "row-too-large"]);
    for (let index = 0; index < SHARDS; index++) {
      const store = sharded.store("normalize", { index, count: SHARDS });
      const own = [
        ...idsOf(await collect(store.read())),
        ...idsOf(await collect(store.read({ rejects: true }))),
      ];
      for (const id of own) expect(shardOfId(id, SHARDS)).toBe(index);
      expect(store.manifest()!.counts.in).toBe(own.length);
      expect(store.manifest()!.counts.failed).toBe(0);
      for (const reject of await collect(store.read({ rejects: true }))) {
        if (readerErrors.has(reject.reason as string)) owners.add(index);
      }
    }
    expect(owners.size).toBe(SHARDS);

    // a shard run again finds its work done
    const again = await sharded.run(["normalize"], { shard: { index: 1, count: SHARDS } });
    expect(again.map((r) => r.action)).toEqual(["skipped"]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
});
