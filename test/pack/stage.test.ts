// The pack stage through the real runner, on hand-written filtered records from a stand-in for the
// filter stage: bad records become rejects with reasons, dialogues are well-formed Code-Feedback
// dialogues built from the records' own turns, languages are packed as configured, the summary sits
// next to the paper, and a forced rerun gives the same dialogues.
import { readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseDialogue } from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { packStage } from "../../stages/pack.js";
import { startTestHub } from "../support/hub-server.js";
import { collect, makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { TINY_BERT, writeBertModel } from "../support/tiny-bert.js";

const TOPICS = [
  "sort a list of integers",
  "reverse a linked list",
  "parse a json file",
  "binary search in a sorted array",
  "count words in a text file",
];

/** Five phrasings of each topic, in two languages, plus bad records. */
function records(): PipelineRecord[] {
  const out: PipelineRecord[] = [];
  let n = 0;
  for (const lang of ["python", "java"]) {
    for (const topic of TOPICS) {
      for (const way of [
        "Write code to",
        "How do I",
        "Implement a function to",
        "Show me how to",
        "Please",
      ]) {
        out.push({
          id: `t:${n++}`,
          query: `${way} ${topic} in ${lang}`,
          answer: `Here is how to ${topic}.`,
          lang,
        });
      }
    }
  }
  out.push({ id: "bad:empty", query: "   ", answer: "x", lang: "python" });
  out.push({ id: "bad:number", query: 42, answer: "x", lang: "python" });
  out.push({ id: "bad:long", query: `sort ${"a ".repeat(3000)}`, answer: "x", lang: "python" });
  out.push({ id: "bad:no-answer", query: "Write code to sort a list of integers, fast", lang: "python" });
  out.push({
    id: "go:1",
    query: "Write code to sort a list of integers in go",
    answer: "sort.Ints(xs)",
    lang: "go",
  });
  return out;
}

let extraRecords: PipelineRecord[] = [];
/** set: filter's records are these alone */
let onlyRecords: PipelineRecord[] | undefined;

const fakeFilter = defineStage({
  name: "filter",
  description: "hand-written filtered records",
  upstream: [],
  kind: "record",
  configSchema: z.object({}).strict(),
  input: async function* () {
    yield* onlyRecords ?? records();
    yield* extraRecords;
  },
  process: async (record) => ({ out: [record] }),
});

/** The parts of pack's summary these tests read. */
interface Summary {
  "single-turn-packing": { turns_per_dialogue: number } | undefined;
  packed: number;
  left_single: number;
  single_turns: number;
  by_language: Record<string, { queries: number; dialogues: number; bypassed: number; index: string }>;
  other_languages: Record<string, number>;
  embedding: { cached: number; computed: number };
  paper: unknown;
}

const nanRecord = {
  id: "t:nan",
  query: "Write code to print nan values in python",
  answer: "print(float('nan'))",
  lang: "python",
};

async function runPack(
  yaml: string,
  options: { force?: boolean; extra?: PipelineRecord[]; only?: PipelineRecord[] } = {},
) {
  extraRecords = options.extra ?? [];
  onlyRecords = options.only;
  const force = options.force ?? false;
  const dir = tempDir("cf-pack-stage-");
  const runner = makeRunner([fakeFilter, packStage] as Stage<unknown>[], { dir, yaml });
  let reports = await runner.run(["pack"]);
  if (force) reports = await runner.run(["pack"], { force: true });
  const dialogues = await collect(runner.store("pack").read());
  const rejects = await collect(runner.store("pack").read({ rejects: true }));
  const stats = reports.find((r) => r.stage === "pack")?.stats as unknown as Summary;
  return { dialogues, rejects, stats, runner, workDir: path.join(dir, "data", "pack", "work") };
}

const LEXICAL = `stages:\n  pack:\n    max_query_chars: 4000\n    embedder: {kind: lexical, dimensions: 256}\n`;

describe("pack stage", () => {
  it("packs similar queries into valid dialogues and rejects bad records with reasons", async () => {
    const { dialogues, rejects, stats } = await runPack(LEXICAL);
    expect(rejects.map((r) => [r.id, r.reason]).sort()).toEqual([
      ["bad:empty", "empty-query"],
      ["bad:long", "query-too-long"],
      ["bad:no-answer", "empty-answer"],
      ["bad:number", "query-not-text"],
    ]);
    expect(dialogues.length).toBeGreaterThan(5);
    const byId = new Map(records().map((r) => [r.id, r]));
    const used = new Set<string>();
    for (const d of dialogues) {
      const parsed = parseDialogue(d);
      expect(parsed.ok, parsed.ok ? "" : parsed.error).toBe(true);
      if (!parsed.ok) continue;
      const { dialogue } = parsed;
      expect(dialogue.method).toBe("single-turn-packing");
      // the default join ([1]) is the paper's table: a query and one neighbour, 2 turns
      expect(dialogue.sources.length).toBe(2);
      // turns are the records' own query and answer, in the order of `sources`
      expect(dialogue.messages).toEqual(
        dialogue.sources.flatMap((id) => [
          { role: "user", content: byId.get(id)!.query },
          { role: "assistant", content: byId.get(id)!.answer },
        ]),
      );
      // within_language (the default): one language per dialogue
      expect(new Set(dialogue.sources.map((id) => byId.get(id)!.lang))).toEqual(new Set([dialogue.lang]));
      for (const id of dialogue.sources) {
        expect(used.has(id)).toBe(false);
        used.add(id);
      }
      const meta = dialogue.meta as { embedder: string; neighbours: { id: string; distance: number }[] };
      expect(meta.embedder).toBe("lexical:v1:d256:w1,2:c3,4");
      expect(meta.neighbours).toHaveLength(4);
    }
    // next to the paper: dialogues, turns, bypassed, by language
    expect(stats["single-turn-packing"]).toMatchObject({
      dialogues: dialogues.length,
      turns_per_dialogue: 2,
      paper: { dialogues: 16_600, turns_per_dialogue: 2 },
    });
    expect(stats.packed).toBe(used.size);
    expect(stats.single_turns).toBe(51);
    expect(stats.packed + stats.left_single).toBe(51);
    expect(stats.by_language.go).toMatchObject({ queries: 1, dialogues: 0, bypassed: 1 });
    expect(stats.paper).toEqual({ single_turns: 105_000, dialogues: 16_600, turns: 33_500 });
  });

  it("by default has the paper's table's 2.0 turns per dialogue; the text's reading, join [2, 3], has 3 or 4", async () => {
    const table = await runPack(LEXICAL);
    const text = await runPack(`${LEXICAL}    join: [2, 3]\n`);
    expect(table.stats["single-turn-packing"]!.turns_per_dialogue).toBe(2);
    expect(table.stats).toMatchObject({ join: [1], reading: "table" });
    expect(text.stats).toMatchObject({ join: [2, 3], reading: "text" });
    const textTurns = text.stats["single-turn-packing"]!.turns_per_dialogue;
    expect(textTurns).toBeGreaterThanOrEqual(3);
    expect(textTurns).toBeLessThanOrEqual(4);
    expect(text.dialogues.every((d) => [3, 4].includes((d.sources as string[]).length))).toBe(true);
    // the same queries, fewer of them left single: more dialogues of 2 than of 3 or 4
    expect(table.dialogues.length).toBeGreaterThan(text.dialogues.length);
  });

  it("packs only the configured languages, and mixes them when told to", async () => {
    const python = await runPack(`${LEXICAL}    languages: [python]\n`);
    expect(python.dialogues.every((d) => d.lang === "python")).toBe(true);
    expect(python.stats.other_languages).toEqual({ java: 25, go: 1 });
    const mixed = await runPack(`${LEXICAL}    within_language: false\n    join: [3]\n`);
    expect(mixed.dialogues.every((d) => (d.sources as string[]).length === 4)).toBe(true);
    expect(Object.keys(mixed.stats.by_language)).toEqual(["all"]);
  });

  it("packs with a transformers.js model fetched from the hub, rejecting the records it answers NaN for", async () => {
    const hubRoot = tempDir("cf-pack-hub-");
    writeBertModel(path.join(hubRoot, "test-org", "tiny-bert"), { ...TINY_BERT, nanWords: ["nan"] });
    const hub = await startTestHub({ root: hubRoot });
    try {
      const yaml =
        `hub: {endpoint: "${hub.url}", retries: 0}\n` +
        "stages:\n  pack:\n    max_query_chars: 4000\n" +
        "    embedder: {kind: transformers, model: test-org/tiny-bert, threads: 1, batch_size: 8}\n";
      const { dialogues, rejects, stats } = await runPack(yaml, { extra: [nanRecord] });
      expect(rejects.find((r) => r.id === nanRecord.id)).toMatchObject({ reason: "embedding-not-finite" });
      expect(dialogues.length).toBeGreaterThan(5);
      expect(dialogues[0]!.meta).toMatchObject({
        embedder: expect.stringMatching(/^transformers:test-org\/tiny-bert@/),
      });
      expect(stats.embedding).toMatchObject({ computed: 52, problems: 1 });
      // the rejected one is not among the single turns the packing worked on
      expect(stats.single_turns).toBe(51);
      expect(stats.packed + stats.left_single).toBe(51);
    } finally {
      await hub.close();
    }
  });

  it("gives the same dialogues on a forced rerun, reusing cached vectors and the saved index", async () => {
    const first = await runPack(LEXICAL);
    const again = await runPack(LEXICAL, { force: true });
    expect(again.dialogues).toEqual(first.dialogues);
    expect(first.stats.embedding).toMatchObject({ cached: 0, computed: 51 });
    expect(again.stats.embedding).toMatchObject({ cached: 51, computed: 0 });
    expect(first.stats.by_language.python?.index).toBe("built");
    expect(again.stats.by_language.python?.index).toBe("reused");
    const other = await runPack(`${LEXICAL}    seed: 7\n`);
    expect(other.dialogues).not.toEqual(first.dialogues);
  });
});

describe("pack stage on small and degenerate inputs", () => {
  const rec = (id: string, query: unknown, lang = "python", answer: unknown = `answer of ${id}`) =>
    ({ id, query, answer, lang }) as PipelineRecord;

  it("completes with no input, and when every record is rejected, without loading a model", async () => {
    // a hub that answers nothing: a model load would fail the run
    const offline =
      'hub: {endpoint: "http://127.0.0.1:9", retries: 0}\n' +
      "stages:\n  pack:\n    embedder: {kind: transformers, model: test-org/absent}\n";
    const empty = await runPack(offline, { only: [] });
    expect(empty.dialogues).toEqual([]);
    expect(empty.stats).toMatchObject({ single_turns: 0, packed: 0, left_single: 0 });
    const bad = await runPack(offline, {
      only: [rec("a", ""), rec("b", 7), rec("c", "sort a list", "python", "  ")],
    });
    expect(bad.dialogues).toEqual([]);
    expect(bad.rejects.map((r) => r.reason).sort()).toEqual([
      "empty-answer",
      "empty-query",
      "query-not-text",
    ]);
  });

  it("packs a language with three records into one dialogue and bypasses one with two", async () => {
    const only = [
      rec("p1", "sort a list of integers in python"),
      rec("p2", "sort a list of strings in python"),
      rec("p3", "sort a list of tuples in python"),
      rec("j1", "reverse a string in java", "java"),
      rec("j2", "reverse a list in java", "java"),
    ];
    // the paper's text: 2 or 3 neighbours join a query
    const { dialogues, stats } = await runPack(`${LEXICAL}    join: [2, 3]\n`, { only });
    expect(dialogues).toHaveLength(1);
    expect([...(dialogues[0]!.sources as string[])].sort()).toEqual(["p1", "p2", "p3"]);
    expect(stats.by_language.python).toMatchObject({ queries: 3, dialogues: 1, bypassed: 0 });
    // two records: one neighbour each, and at least two must join
    expect(stats.by_language.java).toMatchObject({ queries: 2, dialogues: 0, bypassed: 2 });
    expect(stats).toMatchObject({ single_turns: 5, packed: 3, left_single: 2 });
  });

  it("never packs a query with a copy of itself", async () => {
    const copies = ["c1", "c2", "c3", "c4"].map((id) => rec(id, "sort a list of integers in python"));
    const only = [
      ...copies,
      rec("o1", "sort a list of strings in python"),
      rec("o2", "sort a list of floats in python"),
    ];
    const { dialogues, stats } = await runPack(LEXICAL, { only });
    for (const d of dialogues) {
      const queries = (d.messages as { role: string; content: string }[]).filter((m) => m.role === "user");
      expect(new Set(queries.map((m) => m.content)).size).toBe(queries.length);
    }
    expect(stats.packed + stats.left_single).toBe(6);
    const alone = await runPack(LEXICAL, { only: copies });
    expect(alone.dialogues).toEqual([]);
    expect(alone.stats.by_language.python).toMatchObject({ queries: 4, bypassed: 4 });
  });
});

describe("pack stage's saved kNN indexes", () => {
  it("rebuilds a torn index on a rerun, and removes indexes of earlier inputs and killed writes", async () => {
    const first = await runPack(LEXICAL);
    const python = readdirSync(first.workDir).find((f) => f.startsWith("knn-python-"))!;
    const file = path.join(first.workDir, python);
    truncateSync(file, Math.floor(statSync(file).size / 3));
    writeFileSync(path.join(first.workDir, "knn-python-0123456789abcdef01234567.bin"), "an earlier input");
    writeFileSync(path.join(first.workDir, `${python}.999999.tmp`), "a killed write");
    await first.runner.run(["pack"], { force: true });
    const again = await collect(first.runner.store("pack").read());
    expect(again).toEqual(first.dialogues);
    const left = readdirSync(first.workDir).sort();
    expect(left.filter((f) => f.startsWith("knn-")).map((f) => f.replace(/-[0-9a-f]{24}\.bin$/, ""))).toEqual(
      ["knn-go", "knn-java", "knn-python"],
    );
    expect(left).toContain(python);
    // its statistics are the run's state, kept in the manifest: no side file
    expect(left).not.toContain("pack-stats.json");
  });
});
