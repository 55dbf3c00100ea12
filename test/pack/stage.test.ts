// The pack stage through the real runner, on hand-written filtered records from a stand-in for the
// filter stage: bad records become rejects with reasons, dialogues are well-formed Code-Feedback
// dialogues built from the records' own turns, languages are packed as configured, the summary sits
// next to the paper, and a forced rerun gives the same dialogues.
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseDialogue } from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { packStage } from "../../stages/pack.js";
import { tempDir } from "../llm/helpers.js";
import { startTestHub } from "../support/hub-server.js";
import { collect, makeRunner } from "../support/runner-kit.js";
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

const fakeFilter = defineStage({
  name: "filter",
  description: "hand-written filtered records",
  upstream: [],
  kind: "record",
  configSchema: z.object({}).strict(),
  input: async function* () {
    yield* records();
    yield* extraRecords;
  },
  process: async (record) => ({ out: [record] }),
});

/** The parts of pack's summary these tests read. */
interface Summary {
  "single-turn-packing": unknown;
  packed: number;
  left_single: number;
  single_turns: number;
  by_language: Record<string, { queries: number; dialogues: number; bypassed: number; index: string }>;
  other_languages: Record<string, number>;
  embedding: { cached: number; computed: number };
  paper: unknown;
}

const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const d of dirs) d.remove();
});

const nanRecord = {
  id: "t:nan",
  query: "Write code to print nan values in python",
  answer: "print(float('nan'))",
  lang: "python",
};

async function runPack(yaml: string, options: { force?: boolean; extra?: PipelineRecord[] } = {}) {
  extraRecords = options.extra ?? [];
  const force = options.force ?? false;
  const dir = tempDir("cf-pack-stage-");
  dirs.push(dir);
  const runner = makeRunner([fakeFilter, packStage] as Stage<unknown>[], { dir: dir.path, yaml });
  let reports = await runner.run(["pack"]);
  if (force) reports = await runner.run(["pack"], { force: true });
  const dialogues = await collect(runner.store("pack").read());
  const rejects = await collect(runner.store("pack").read({ rejects: true }));
  const stats = reports.find((r) => r.stage === "pack")?.stats as unknown as Summary;
  return { dialogues, rejects, stats };
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
      expect([3, 4]).toContain(dialogue.sources.length);
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
      paper: { dialogues: 16_600, turns_per_dialogue: 2 },
    });
    expect(stats.packed).toBe(used.size);
    expect(stats.single_turns).toBe(51);
    expect(stats.packed + stats.left_single).toBe(51);
    expect(stats.by_language.go).toMatchObject({ queries: 1, dialogues: 0, bypassed: 1 });
    expect(stats.paper).toEqual({ single_turns: 105_000, dialogues: 16_600, turns: 33_500 });
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
    dirs.push(hubRoot);
    writeBertModel(path.join(hubRoot.path, "test-org", "tiny-bert"), { ...TINY_BERT, nanWords: ["nan"] });
    const hub = await startTestHub({ root: hubRoot.path });
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
