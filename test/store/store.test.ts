import { appendFileSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DoneSet } from "../../pipeline/store/done-set.js";
import { MANIFEST_FILE, type Manifest, writeManifest } from "../../pipeline/store/manifest.js";
import {
  type Entry,
  entryLine,
  type PartWriter,
  repairTail,
  StoreError,
} from "../../pipeline/store/parts.js";
import { OutputDigest, StageStore } from "../../pipeline/store/stage-store.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

describe("store", () => {
  it("repairTail cuts a torn last line and keeps whole ones", () => {
    const file = join(tempDir(), "p.jsonl");
    writeFileSync(file, '{"s":0}\n{"s":1}\n{"s":2,"o":[{"id":"x"');
    expect(repairTail(file)).toBe(21);
    expect(readFileSync(file, "utf8")).toBe('{"s":0}\n{"s":1}\n');
    expect(repairTail(file)).toBe(0);
    writeFileSync(file, "no newline at all");
    repairTail(file);
    expect(readFileSync(file, "utf8")).toBe("");
  });

  it("DoneSet grows and counts each position once", () => {
    const done = new DoneSet();
    for (const p of [0, 7, 8, 100_000, 7]) done.add(p);
    expect(done.size).toBe(4);
    expect(done.has(100_000)).toBe(true);
    expect(done.has(99_999)).toBe(false);
    expect(done.has(10_000_000)).toBe(false);
  });

  it("OutputDigest does not depend on order", () => {
    const a = new OutputDigest();
    const b = new OutputDigest();
    const records = [{ id: "1" }, { id: "2", x: [1] }, { id: "3" }];
    for (const r of records) a.add(r);
    for (const r of [...records].reverse()) b.add(r);
    expect(a.value).toBe(b.value);
    b.add({ id: "4" });
    expect(a.value).not.toBe(b.value);
  });

  it("an entry's line is JSON.stringify(entry), and the digest sees each output's text as written", () => {
    const entries: Entry[] = [
      { s: 0 },
      { s: 1, o: [{ id: "a", query: 'quote " and \\ and \u2028', n: [1, -0, 2.5e-7] }] },
      { s: 2, o: [{ id: "b" }, { id: "c", nested: { deep: [null, true] } }], r: [{ id: "d", reason: "r" }] },
      { s: 3, r: [{ id: "e", reason: "short", detail: "ünïcode 🙂" }] },
      { s: 4, f: { reason: "llm-error", detail: "x" } },
      { s: -1, o: [] },
      { s: 5, g: 9, o: [{ id: "f" }], r: [{ id: "g", reason: "r" }], t: { seen: 1, "a.b": 2.5 } },
    ];
    for (const entry of entries) {
      const seen: string[] = [];
      const line = entryLine(entry, (json) => seen.push(json));
      expect(line).toBe(`${JSON.stringify(entry)}\n`);
      expect(seen).toEqual((entry.o ?? []).map((r) => JSON.stringify(r)));
    }
    const a = new OutputDigest();
    const b = new OutputDigest();
    for (const entry of entries) {
      entryLine(entry, a.addJson);
      for (const r of entry.o ?? []) b.add(r);
    }
    expect(a.value).toBe(b.value);
  });

  it("scan rebuilds the done set; a failed entry is not done until a later success", async () => {
    const store = new StageStore(tempDir(), "s");
    const w = store.newPart();
    w.append({ s: 0, o: [{ id: "a" }] });
    w.append({ s: 1, f: { reason: "llm-error" } });
    w.append({ s: 2, r: [{ id: "c", reason: "bad" }] });
    w.close();
    let scan = await store.scan();
    expect(scan.counts).toEqual({ in: 2, out: 1, rejected: 1, failed: 1 });
    expect(scan.done.has(1)).toBe(false);
    const w2 = store.newPart();
    w2.append({ s: 1, o: [{ id: "b" }] });
    w2.append({ s: 0, o: [{ id: "a-duplicate" }] }); // never happens in a run, but must not double count
    w2.close();
    appendFileSync(store.parts().at(-1)!, '{"s":9,"o":[');
    scan = await store.scan();
    expect(scan.counts).toEqual({ in: 3, out: 2, rejected: 1, failed: 0 });
    expect((await collect(store.read())).map((r) => r.id)).toEqual(["a", "b"]);
    expect((await collect(store.read({ rejects: true }))).map((r) => r.id)).toEqual(["c"]);
  });

  it("PartWriter buffers but loses nothing on close", async () => {
    const store = new StageStore(tempDir(), "s");
    const w: PartWriter = store.newPart();
    for (let i = 0; i < 5000; i++) w.append({ s: i, o: [{ id: String(i) }] });
    w.close();
    expect((await collect(store.read())).length).toBe(5000);
  });

  it("the lock refuses a second live holder and takes over a dead one", () => {
    const store = new StageStore(tempDir(), "s");
    const unlock = store.lock();
    writeFileSync(join(store.dir, "lock"), "1"); // pid 1 is alive
    expect(() => store.lock()).toThrow(/being run by process 1/);
    writeFileSync(join(store.dir, "lock"), "999999999");
    const again = store.lock();
    again();
    unlock();
  });

  it("a manifest write that fails (a full disk: /dev/full) leaves no temporary file behind", () => {
    const dir = tempDir();
    symlinkSync("/dev/full", join(dir, `${MANIFEST_FILE}.${process.pid}.tmp`));
    expect(() => writeManifest(dir, {} as Manifest)).toThrow(/ENOSPC/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("reading a stage that is running or was killed", () => {
  it("read() skips a torn last line instead of failing on it", async () => {
    const store = new StageStore(tempDir(), "s");
    const w = store.newPart();
    w.append({ s: 0, o: [{ id: "a" }] });
    w.append({ s: 1, o: [{ id: "b" }] });
    w.close();
    appendFileSync(store.parts().at(-1)!, '{"s":2,"o":[{"id":"c"');
    expect((await collect(store.read())).map((r) => r.id)).toEqual(["a", "b"]);
  });

  it("damage that is not a torn tail is a StoreError with advice", async () => {
    const store = new StageStore(tempDir(), "s");
    const w = store.newPart();
    w.close();
    writeFileSync(store.parts().at(-1)!, 'garbage\n{"s":0,"o":[]}\n');
    await expect(collect(store.read())).rejects.toThrow(/damaged entry .* run `pnpm pipeline reset`/);
    await expect(collect(store.read())).rejects.toBeInstanceOf(StoreError);
  });
});

describe("reading parts", () => {
  /** A store with one part holding exactly these entries, written as the runner writes them. */
  function storeWith(entries: Entry[]): StageStore {
    const store = new StageStore(tempDir(), "s");
    const writer = store.newPart();
    for (const entry of entries) writer.append(entry);
    writer.close();
    return store;
  }

  it("reads lines longer than a read chunk, and characters cut by a chunk's end, whole", async () => {
    // records of 0.3-2.5 MB of multi-byte text: chunk ends (1 MiB) fall inside lines and inside characters
    const entries: Entry[] = [];
    for (let i = 0; i < 6; i++) {
      const text = `${"ä".repeat(150_000 * (i + 1) + i)}🙂${"x".repeat(i * 7919)}`;
      entries.push({ s: i, o: [{ id: `r${i}`, text }] });
      entries.push({ s: 100 + i, r: [{ id: `j${i}`, reason: "short", detail: text.slice(0, 1000 + i) }] });
    }
    const store = storeWith(entries);
    expect(await collect(store.read())).toEqual(entries.flatMap((e) => e.o ?? []));
    expect(await collect(store.read({ rejects: true }))).toEqual(entries.flatMap((e) => e.r ?? []));
  });

  it("skips entries without the items asked for, yet keeps the first-committed-wins rule", async () => {
    const entries: Entry[] = [
      // the text `"o":[` inside a string is escaped, so this reject-only line is skipped unparsed
      { s: 0, r: [{ id: "a", reason: "short", detail: 'says "o":[ and "r":[' }] },
      // a later entry for the same position is a duplicate: never read, whatever it holds
      { s: 0, o: [{ id: "a-again" }] },
      // a failure does not mark its position: the success after it is read
      { s: 1, f: { reason: "llm-error" } },
      { s: 1, o: [{ id: "b" }], t: { n: 1 } },
      // a nested key "o" makes the line look as if it had outputs: parsed, and still right
      { s: 2, r: [{ id: "c", reason: "r", record: { id: "c", o: [1] } }] },
      { s: 3, o: [{ id: "d" }], r: [{ id: "e", reason: "r" }] },
      { s: 4, t: { seen: 1 } },
      { s: 4, o: [{ id: "late" }] },
      { s: 5, g: 12, t: { seen: 1 } },
      { s: 5, g: 12, o: [{ id: "late-too" }] },
    ];
    const store = storeWith(entries);
    expect((await collect(store.read())).map((r) => r.id)).toEqual(["b", "d"]);
    expect((await collect(store.read({ rejects: true }))).map((r) => r.id)).toEqual(["a", "c", "e"]);
    const positions: number[] = [];
    for await (const { at } of store.readOrdered()) positions.push(at);
    expect(positions).toEqual([1, 3]);
  });
});
