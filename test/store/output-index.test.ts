// A complete stage's outputs, indexed: every output's id and fields in the order `read` yields them,
// each record read back by its line's offset; the index made on first use and kept, and never
// served once the parts differ from the seal it was made from.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import type { Manifest } from "../../pipeline/store/manifest.js";
import { readIndexed } from "../../pipeline/store/output-index.js";
import type { Entry } from "../../pipeline/store/parts.js";
import { StoreError } from "../../pipeline/store/parts.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const INDEX = "outputs.index.jsonl";

/** Entries as a stage commits them: multi-byte text (offsets are bytes), every kind of line. */
function entries(): Entry[] {
  const list: Entry[] = [];
  for (let i = 0; i < 30; i++) {
    const text = `${"ä🙂".repeat(i * 3)} query ${i}`;
    if (i % 7 === 3) list.push({ s: i, f: { reason: "llm-error" } });
    if (i % 5 === 4) list.push({ s: i, r: [{ id: `j${i}`, reason: "short", detail: text }] });
    else list.push({ s: i, o: [{ id: `r${i}`, lang: i % 3 ? "python" : "cpp", query: text }] });
  }
  // two outputs of one input, one without the field; a duplicate of a committed position; a record
  // longer than a read chunk (1 MiB)
  list.push({
    s: 30,
    o: [
      { id: "two-a", lang: "go" },
      { id: "two-b", lang: 7 },
    ],
  });
  list.push({ s: 2, o: [{ id: "r2-again", lang: "python" }] });
  list.push({ s: 31, o: [{ id: "long", lang: "python", query: "é".repeat(700_000) }] });
  return list;
}

/** A stage of two parts holding these entries, completed as the runner completes one; indexed by `fields`. */
async function completeStore(list: Entry[], fields?: readonly string[]): Promise<StageStore> {
  const store = new StageStore(tempDir(), "s");
  for (const half of [list.slice(0, 12), list.slice(12)]) {
    const writer = store.newPart();
    for (const entry of half) writer.append(entry);
    writer.close();
  }
  const outputs = (await collect(store.read())).length;
  const manifest: Manifest = {
    version: 1,
    stage: "s",
    state: "complete",
    configHash: "c",
    upstream: {},
    counts: { in: 0, out: outputs, rejected: 0, failed: 0 },
    runs: 1,
    startedAt: "",
    updatedAt: "",
    elapsedMs: 0,
  };
  store.saveManifest(manifest);
  if (fields) await store.outputIndex(fields);
  return store;
}

const rows = (store: StageStore) => store.manifest()!.counts.out;

async function recordsOf(store: StageStore, fields: readonly string[]): Promise<PipelineRecord[]> {
  const { rows, paths } = await store.outputIndex(fields);
  return collect(readIndexed(paths, rows, (what) => new StoreError(what)));
}

describe("a complete stage's output index", () => {
  it("lists every output read() yields, in its order, with its fields, and reads each back by offset", async () => {
    const store = await completeStore(entries());
    const all = await collect(store.read());
    const { rows } = await store.outputIndex(["lang"]);
    expect(rows.map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(rows.find((r) => r.id === "r2")).toBeDefined();
    expect(rows.some((r) => r.id === "r2-again")).toBe(false);
    expect(rows.find((r) => r.id === "two-a")!.fields).toEqual({ lang: "go" });
    // a field the record lacks, or holds as something else than a string, is absent
    expect(rows.find((r) => r.id === "two-b")!.fields).toEqual({});
    expect(await recordsOf(store, ["lang"])).toEqual(all);
    // a few rows, in any order: those records and no others
    const { paths } = await store.outputIndex(["lang"]);
    const some = [rows.at(-1)!, rows[3]!, rows.find((r) => r.id === "two-b")!];
    const read = await collect(readIndexed(paths, some, (what) => new StoreError(what)));
    expect(read.map((r) => r.id)).toEqual(["long", rows[3]!.id, "two-b"]);
    expect(read[0]).toEqual(all.at(-1));
  });

  it("once saved, is what is read, unless it was changed or lacks a field asked for", async () => {
    const store = await completeStore(entries(), ["lang"]);
    const path = join(store.partsDir, INDEX);
    expect(existsSync(path)).toBe(true);
    // the saved index is what is read (a rebuild renames a new file into place)...
    const made = statSync(path).ino;
    const rows1 = (await store.outputIndex(["lang"])).rows;
    expect(statSync(path).ino).toBe(made);
    // ...unless it was changed: a row renamed, or its language, is made again from the parts
    const text = readFileSync(path, "utf8");
    for (const changed of [text.replace('["r1",', '["r9",'), text.replace('"python"]', '"cpp"]')]) {
      expect(changed).not.toBe(text);
      writeFileSync(path, changed);
      expect((await store.outputIndex(["lang"])).rows).toEqual(rows1);
      expect(readFileSync(path, "utf8")).toBe(text);
    }
    // asked for a field it lacks, it is made again from the parts
    const { rows } = await store.outputIndex(["lang", "query"]);
    expect(rows[1]!.id).toBe("r1");
    expect(rows[1]!.fields.query).toBe(`${"ä🙂".repeat(3)} query 1`);
  });

  it("made on first use, it is saved for the next reader, and never served for other parts", async () => {
    const store = await completeStore(entries());
    const path = join(store.partsDir, INDEX);
    expect(existsSync(path)).toBe(false);
    const first = await store.outputIndex(["lang"]);
    expect(existsSync(path)).toBe(true);
    expect((await store.outputIndex(["lang"])).rows).toEqual(first.rows);
    // the stage recomputed (other parts, another seal): the old index is not its index
    const saved = readFileSync(path, "utf8");
    const other = await completeStore(entries().slice(5));
    writeFileSync(join(other.partsDir, INDEX), saved);
    const { rows } = await other.outputIndex(["lang"]);
    expect(rows.map((r) => r.id)).toEqual((await collect(other.read())).map((r) => r.id));
    expect(rows).not.toEqual(first.rows);
  });

  it("made again where the saved one is not as this tool writes it", async () => {
    const store = await completeStore(entries(), ["lang"]);
    const path = join(store.partsDir, INDEX);
    const good = readFileSync(path, "utf8");
    const expected = (await collect(store.read())).map((r) => r.id);
    const lines = good.split("\n");
    for (const damaged of [
      "garbage\n",
      "null\n",
      `${lines[0]}\n`, // the header alone: no row
      `${lines.slice(0, -2).join("\n")}\n`, // a row short
      `${lines[0]}\n["a",1,0,0\n`, // cut inside a row
      good.slice(0, -1), // no newline at its end
    ]) {
      writeFileSync(path, damaged);
      expect((await store.outputIndex(["lang"])).rows.map((r) => r.id)).toEqual(expected);
      expect(readFileSync(path, "utf8")).toBe(good);
    }
  });

  it("stops with the stage's damage advice when a part changed after it completed", async () => {
    // made on first use: the parts are checked against the seal as they are read
    const store = await completeStore(entries());
    const part = store.parts()[0]!;
    const text = readFileSync(part, "utf8");
    writeFileSync(part, text.replace('"id":"r1"', '"id":"q1"'));
    const error = await store.outputIndex(["lang"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(String(error)).toMatch(/stage s is damaged: part part-00000\.jsonl differs .* --force/);
    // saved before the damage: the line read by its offset is checked to be the one it names
    const sealed = await completeStore(entries(), ["lang"]);
    const first = sealed.parts()[0]!;
    writeFileSync(first, readFileSync(first, "utf8").replace('"id":"r1"', '"id":"q1"'));
    await expect(recordsOf(sealed, ["lang"])).rejects.toThrow(
      /part-00000\.jsonl at byte \d+ is not the entry/,
    );
    // a change of the same size inside a record (not its id): its line no longer hashes as indexed
    writeFileSync(first, readFileSync(first, "utf8").replace('"id":"q1"', '"id":"r1"'));
    expect((await recordsOf(sealed, ["lang"])).length).toBe(rows(sealed));
    writeFileSync(first, readFileSync(first, "utf8").replace("query 6", "query 7"));
    await expect(recordsOf(sealed, ["lang"])).rejects.toThrow(
      /part-00000\.jsonl at byte \d+ is not the entry/,
    );
    // a part of another size is caught before anything is read
    writeFileSync(first, `${readFileSync(first, "utf8")}{"s":99,"o":[]}\n`);
    await expect(sealed.outputIndex(["lang"])).rejects.toThrow(/has \d+ bytes where its manifest says/);
  });

  it("is refused for a stage that is not complete", async () => {
    const store = new StageStore(tempDir(), "s");
    const writer = store.newPart();
    writer.append({ s: 0, o: [{ id: "a" }] });
    writer.close();
    await expect(store.outputIndex(["lang"])).rejects.toThrow(/s is not complete/);
  });
});
