// The export stage through the runner, over hand-written filtered pairs and dialogues validated in the
// real sandbox: the structure of every file (each Code-Feedback line has only id and messages; each
// Filtered-Instruction line only query, answer, resource and lang), Parquet read back with hyparquet
// equal to the JSONL, the dataset card's metadata and counts, the same bytes and ids on a rerun, and
// files that are whole or absent.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { loadConfig } from "../../pipeline/config/load.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { Runner } from "../../pipeline/runner.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { writeAtomically } from "../../stages/export/atomic.js";
import type { ExportStats } from "../../stages/export/stats.js";
import { exportStage } from "../../stages/export.js";
import { defineValidateStage } from "../../stages/validate.js";
import { QUEUED_TEST_TIMEOUT_MS, testConfig } from "../sandbox/helpers.js";
import { collect, noServices, tempDir } from "../support/runner-kit.js";
import { dialogueSource, sampleDialogues } from "../validate/fixtures.js";

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

const REPOS: Record<string, string> = {
  magicoder: "ise-uiuc/Magicoder-OSS-Instruct-75K",
  evolinstruct: "nickrosh/Evol-Instruct-Code-80k-v1",
};

/** Filtered pairs as filter keeps them (scores and origin included), deliberately out of id order. */
function filteredPairs(): PipelineRecord[] {
  const pair = (
    resource: string,
    row: number,
    lang: string,
    query: string,
    answer: string,
  ): PipelineRecord => ({
    id: `${resource}:${String(row).padStart(6, "0")}`,
    query,
    answer,
    resource,
    lang,
    origin: { repo: REPOS[resource], file: "data.jsonl", row, commit: `${resource.length}`.repeat(40) },
    complexity: [{ round: 1, prompt: "complexity-1", score: 4 }],
  });
  return [
    pair("magicoder", 7, "python", "Reverse a linked list in place.", "```python\ndef rev(h):\n    ...\n```"),
    pair("evolinstruct", 2, "javascript", "Debounce a function.", "```js\nconst d = (f) => f;\n```"),
    pair("magicoder", 3, "python", "Parse a CSV line with quotes — “smart” ones too.", "Use the csv module."),
  ];
}

function filterSource(): Stage<unknown> {
  return defineStage({
    name: "filter",
    description: "test filtered pairs",
    upstream: [],
    kind: "global",
    configSchema: z.object({}).strict(),
    async run(_ctx, emit) {
      for (const r of filteredPairs()) await emit.out(r);
    },
  }) as Stage<unknown>;
}

function exportRunner(dir: string, yaml = "") {
  const file = join(dir, "config.yaml");
  writeFileSync(
    file,
    `data_dir: ${join(dir, "data")}\nllm:\n  weak: {model: test-weak-model}\nstages:\n  validate: {run_timeout_s: 2}\n${yaml}`,
  );
  const stages = [
    filterSource(),
    dialogueSource("pack", sampleDialogues),
    defineValidateStage(["pack"]),
    exportStage,
  ];
  return new Runner(stages, loadConfig({ file, sets: [] }), {
    services: { ...noServices, sandbox: () => sandbox },
    log: silentLogger,
    progressStream: { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream,
  });
}

const exportDir = (dir: string) => join(dir, "data", "export");
const jsonl = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function parquetRows(path: string) {
  return parquetReadObjects({ file: await asyncBufferFromFile(path) });
}

describe("export stage", { timeout: QUEUED_TEST_TIMEOUT_MS }, () => {
  const dir = tempDir("cf-export-");

  it("writes both datasets as JSONL and Parquet with exactly the published columns", async () => {
    const runner = exportRunner(dir);
    await runner.run(["export"]);
    expect(runner.status("export").state).toBe("complete");
    const files = readdirSync(exportDir(dir)).filter(
      (f) => !["manifest.json", "parts", "work", "lock"].includes(f),
    );
    expect(files.sort()).toEqual([
      "README.md",
      "code-feedback.jsonl",
      "code-feedback.parquet",
      "filtered-instruction.jsonl",
      "filtered-instruction.parquet",
      "report.html",
    ]);

    const lines = jsonl(join(exportDir(dir), "code-feedback.jsonl"));
    const kept = await collect(runner.store("validate").read());
    expect(lines.map((l) => l.id)).toEqual(kept.map((d) => d.id).sort());
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(["id", "messages"]);
      for (const m of line.messages as Record<string, unknown>[]) {
        expect(Object.keys(m)).toEqual(["role", "content"]);
        expect(["system", "user", "assistant"]).toContain(m.role);
      }
      const source = kept.find((d) => d.id === line.id)!;
      expect(line.messages).toEqual(source.messages);
    }
    // validate dropped the failing and the timed-out dialogue: 4 of 6 are released
    expect(lines).toHaveLength(4);

    const pairs = jsonl(join(exportDir(dir), "filtered-instruction.jsonl"));
    for (const p of pairs) expect(Object.keys(p)).toEqual(["query", "answer", "resource", "lang"]);
    expect(pairs.map((p) => p.query)).toEqual([
      "Debounce a function.",
      "Parse a CSV line with quotes — “smart” ones too.",
      "Reverse a linked list in place.",
    ]);

    expect(await parquetRows(join(exportDir(dir), "code-feedback.parquet"))).toEqual(lines);
    expect(await parquetRows(join(exportDir(dir), "filtered-instruction.parquet"))).toEqual(pairs);
  });

  it("writes a dataset card with hub metadata, counts per method and language, sources, licences and models", async () => {
    const card = readFileSync(join(exportDir(dir), "README.md"), "utf8");
    const front = /^---\n([\s\S]*?)\n---\n/.exec(card);
    expect(front).not.toBeNull();
    const meta = parseYaml(front![1]!) as Record<string, unknown>;
    expect(meta).toMatchObject({
      license: "apache-2.0",
      task_categories: ["question-answering", "text-generation"],
      size_categories: ["n<1K"],
      tags: ["code"],
    });
    const configs = meta.configs as { config_name: string; data_files: { path: string }[] }[];
    expect(configs.map((c) => c.config_name)).toEqual(["code-feedback", "filtered-instruction"]);
    for (const c of configs) expect(existsSync(join(exportDir(dir), c.data_files[0]!.path))).toBe(true);
    expect(meta.dataset_info).toEqual(
      expect.arrayContaining([expect.objectContaining({ splits: [{ name: "train", num_examples: 4 }] })]),
    );
    // counts: pack's fixtures are single-turn-packing and interaction-simulation dialogues
    expect(card).toMatch(/\| single-turn-packing \| 2 \| 1\.5 \| 16,600 \| 2 \|/);
    expect(card).toMatch(/\| interaction-simulation \| cpp \| 1 \|/);
    expect(card).toMatch(/\| python \| 2 \|/);
    expect(card).toContain("| magicoder | [ise-uiuc/Magicoder-OSS-Instruct-75K]");
    expect(card).toMatch(/Magicoder-OSS-Instruct-75K\)[^\n]*\| 2 \| mit \|/);
    expect(card).toMatch(/Evol-Instruct-Code-80k-v1\)[^\n]*not stated here/);
    expect(card).toContain("| weak (first answers in interaction simulation) | `test-weak-model` |");
    expect(card).toMatch(/\| not-runnable \| 1 \|/);
  });

  it("keeps the file list, sizes and hashes in the manifest, and the same bytes and ids on a rerun", async () => {
    const runner = exportRunner(dir);
    const stats = runner.status("export").manifest!.stats as unknown as ExportStats;
    expect(stats.files.map((f) => f.name)).toContain("code-feedback.parquet");
    expect(stats.code_feedback.by_method["single-turn-packing"]).toMatchObject({ dialogues: 2 });
    expect(stats.filtered_instruction).toMatchObject({
      rows: 3,
      by_source: { magicoder: 2, evolinstruct: 1 },
    });
    const before = Object.fromEntries(
      readdirSync(exportDir(dir))
        .filter((f) => f.includes("."))
        .map((f) => [f, readFileSync(join(exportDir(dir), f))]),
    );
    for (const f of stats.files) expect(before[f.name]!.length).toBe(f.bytes);

    await runner.run(["export"], { force: true });
    for (const [name, bytes] of Object.entries(before)) {
      // the manifest and the report say when they were written; the release itself is byte-stable
      if (name === "manifest.json" || name === "report.html") continue;
      expect(readFileSync(join(exportDir(dir), name)).equals(bytes), name).toBe(true);
    }
    // and from scratch in another data dir: validation and export again, same ids, same bytes
    const other = tempDir("cf-export-");
    await exportRunner(other).run(["export"]);
    expect(
      readFileSync(join(exportDir(other), "code-feedback.jsonl")).equals(before["code-feedback.jsonl"]!),
    ).toBe(true);
    expect(
      readFileSync(join(exportDir(other), "code-feedback.parquet")).equals(before["code-feedback.parquet"]!),
    ).toBe(true);
  });

  it("writes JSONL only when Parquet is turned off, and the card points at it", async () => {
    const plain = tempDir("cf-export-");
    await exportRunner(plain, "  export: {parquet: false}\n").run(["export"]);
    expect(existsSync(join(exportDir(plain), "code-feedback.parquet"))).toBe(false);
    expect(readFileSync(join(exportDir(plain), "README.md"), "utf8")).toContain("path: code-feedback.jsonl");
  });
});

describe("atomic files", () => {
  it("an interrupted write leaves the previous file whole, and the next export removes the leftover", async () => {
    const dir = tempDir("cf-atomic-");
    const target = join(dir, "code-feedback.jsonl");
    await writeAtomically(target, ['{"id":"a"}\n']);
    function* interrupted() {
      yield '{"id":"b"}\n';
      throw new Error("killed half-way");
    }
    await expect(writeAtomically(target, interrupted())).rejects.toThrow("killed half-way");
    expect(readFileSync(target, "utf8")).toBe('{"id":"a"}\n');
    expect(readdirSync(dir).some((f) => /\.tmp-\d+$/.test(f))).toBe(true);

    const { removeLeftovers } = await import("../../stages/export/atomic.js");
    await removeLeftovers(dir);
    expect(readdirSync(dir)).toEqual(["code-feedback.jsonl"]);
  });
});
