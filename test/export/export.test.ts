// The export stage through the runner, over hand-written filtered pairs and dialogues validated in the
// real sandbox: each file's columns (Code-Feedback: an integer id and user / assistant messages), each
// Parquet file read back by DuckDB equal to its JSONL, the card's metadata, counts, sources and
// citations, the same bytes and ids on a rerun, and files that are whole or absent.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import type { PipelineRecord } from "../../pipeline/record.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { auditStage } from "../../stages/audit.js";
import { writeAtomically } from "../../stages/export/atomic.js";
import { releaseIds } from "../../stages/export/ids.js";
import type { ExportSummary } from "../../stages/export/stats.js";
import { exportStage } from "../../stages/export.js";
import { defineValidateStage } from "../../stages/validate.js";
import { testConfig } from "../sandbox/helpers.js";
import { collect, makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { dialogue, dialogueSource, fence, sampleDialogues, turns } from "../validate/fixtures.js";

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

/** What download would have fetched: one file per source, at a commit of its own. */
function downloadSource(): Stage<unknown> {
  const files = [
    ["magicoder", "ise-uiuc/Magicoder-OSS-Instruct-75K", "v1.0"],
    ["evolinstruct", "nickrosh/Evol-Instruct-Code-80k-v1", "main"],
    ["sharegpt", "ajibawa-2023/Python-Code-23k-ShareGPT", "main"],
    ["taco", "BAAI/TACO", "main"],
  ];
  return defineStage({
    name: "download",
    description: "test downloaded files",
    upstream: [],
    kind: "global",
    configSchema: z.object({}).strict(),
    async run(_ctx, emit) {
      for (const [i, [source, repo, revision]] of files.entries())
        await emit.out({ id: `${repo}/data.jsonl`, source, repo, revision, commit: `${i + 1}`.repeat(40) });
    },
  }) as Stage<unknown>;
}

/** sampleDialogues and one simulated dialogue that opens with a system prompt (pack's stand-in emits them). */
function releasedDialogues(): PipelineRecord[] {
  return [...sampleDialogues(), makeSystemDialogue()];
}

/** A LeetCode dialogue from two TACO rows. */
function leetcodeDialogue(): PipelineRecord {
  return dialogue(
    "leetcode-similar-problem",
    ["taco:train-00000:000001", "taco:train-00000:000002"],
    "python",
    turns(
      ["Two Sum, LeetCode style.", fence("python", "print([0, 1])")],
      ["Now Three Sum.", fence("python", "print([0, 1, 2])")],
    ),
  );
}

const SYSTEM_PROMPT = "You are a code interpreter. Run the code you write.";

function makeSystemDialogue(): PipelineRecord {
  return dialogue("interaction-simulation", ["magicoder:000007"], "python", [
    { role: "system", content: SYSTEM_PROMPT },
    ...turns(["Reverse a linked list in place.", fence("python", "print(list(reversed([1, 2, 3])))")]),
  ]);
}

/** A stand-in for leetcode that may be switched off, as the real one may. */
function leetcodeSource(): Stage<unknown> {
  const methods = ["leetcode-similar-problem", "leetcode-follow-up"] as const;
  return {
    ...dialogueSource("leetcode", () => [leetcodeDialogue()], methods),
    switchable: true,
  } as Stage<unknown>;
}

function exportRunner(dir: string, yaml = "") {
  const stages = [
    downloadSource(),
    filterSource(),
    // pack stands in for simulate and correct too: with leetcode, the five paper methods are declared
    dialogueSource("pack", releasedDialogues, [
      "single-turn-packing",
      "interaction-simulation",
      "code-correction",
    ]),
    leetcodeSource(),
    auditStage,
    defineValidateStage(["pack", "leetcode", "audit"]),
    exportStage,
  ];
  return makeRunner(stages, {
    dir,
    yaml: `llm:\n  weak: {model: test-weak-model}\nstages:\n  validate: {run_timeout_s: 2}\n${yaml}`,
    services: { ...noServices, sandbox: () => sandbox },
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

/** A Parquet file as DuckDB reads it: column names and types, and rows (integers as numbers). */
async function duckdbRead(path: string) {
  const db = await DuckDBInstance.create(":memory:");
  const connection = await db.connect();
  try {
    const from = `read_parquet('${path.replaceAll("'", "''")}')`;
    const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`);
    const schema = described.getRowObjectsJS().map((r) => [String(r.column_name), String(r.column_type)]);
    const read = await connection.runAndReadAll(`SELECT * FROM ${from}`);
    const rows = JSON.parse(
      JSON.stringify(read.getRowObjectsJS(), (_k, v) => (typeof v === "bigint" ? Number(v) : v)),
    ) as Record<string, unknown>[];
    return { schema, rows };
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

const MESSAGES_TYPE = 'STRUCT("role" VARCHAR, "content" VARCHAR)[]';

describe("export stage", () => {
  const dir = tempDir("cf-export-");

  it("writes both datasets as JSONL and Parquet with exactly the published columns", async () => {
    const runner = exportRunner(dir);
    await runner.run(["export"]);
    expect(runner.status("export").state).toBe("complete");
    const files = readdirSync(exportDir(dir)).filter(
      (f) => !["manifest.json", "parts", "work", "lock"].includes(f),
    );
    // the report is the CLI's, written after the run: the stage writes the release alone
    expect(files.sort()).toEqual([
      "README.md",
      "code-feedback-full.jsonl",
      "code-feedback-full.parquet",
      "code-feedback.jsonl",
      "code-feedback.parquet",
      "filtered-instruction.jsonl",
      "filtered-instruction.parquet",
    ]);

    const lines = jsonl(join(exportDir(dir), "code-feedback.jsonl"));
    const kept = await collect(runner.store("validate").read());
    const stringIds = kept.map((d) => d.id).sort();
    // validate dropped the failing and the timed-out dialogue: 6 of 8 are released, in string-id order
    expect(lines).toHaveLength(6);
    const ids = releaseIds(stringIds);
    expect(lines.map((l) => l.id)).toEqual(stringIds.map((id) => ids.get(id)));
    expect(new Set(lines.map((l) => l.id)).size).toBe(6);
    for (const [i, line] of lines.entries()) {
      expect(Object.keys(line)).toEqual(["id", "messages"]);
      expect(Number.isSafeInteger(line.id)).toBe(true);
      for (const m of line.messages as Record<string, unknown>[]) {
        expect(Object.keys(m)).toEqual(["role", "content"]);
        expect(["user", "assistant"]).toContain(m.role);
      }
      const source = kept.find((d) => d.id === stringIds[i])!;
      expect(line.messages).toEqual(
        (source.messages as { role: string }[]).filter((m) => m.role !== "system"),
      );
    }

    const full = jsonl(join(exportDir(dir), "code-feedback-full.jsonl"));
    expect(full.map((r) => r.dialogue_id)).toEqual(stringIds);
    expect(full.map((r) => r.id)).toEqual(lines.map((l) => l.id));
    for (const r of full) {
      expect(Object.keys(r)).toEqual([
        "id",
        "dialogue_id",
        "method",
        "lang",
        "sources",
        "messages",
        "system",
        "validation",
        "validation_tags",
      ]);
    }
    const simulated = full.find((r) => r.method === "interaction-simulation" && r.system !== null)!;
    expect(simulated).toMatchObject({
      sources: ["magicoder:000007"],
      lang: "python",
      system: SYSTEM_PROMPT,
      validation: "passed",
      validation_tags: [],
    });
    expect((simulated.messages as { role: string }[]).map((m) => m.role)).toEqual(["user", "assistant"]);

    const pairs = jsonl(join(exportDir(dir), "filtered-instruction.jsonl"));
    for (const p of pairs) expect(Object.keys(p)).toEqual(["query", "answer", "resource", "lang"]);
    expect(pairs.map((p) => p.query)).toEqual([
      "Debounce a function.",
      "Parse a CSV line with quotes — “smart” ones too.",
      "Reverse a linked list in place.",
    ]);

    // hyparquet (the readers' library) reads INT64 as bigint
    const asNumbers = (rows: Record<string, unknown>[]) =>
      rows.map((r) => ({ ...r, id: Number(r.id as bigint) }));
    expect(asNumbers(await parquetRows(join(exportDir(dir), "code-feedback.parquet")))).toEqual(lines);
    expect(await parquetRows(join(exportDir(dir), "filtered-instruction.parquet"))).toEqual(pairs);
  });

  it("an independent reader (DuckDB) finds each Parquet config's schema and rows equal to its JSONL", async () => {
    const at = (name: string) => join(exportDir(dir), name);
    const publicConfig = await duckdbRead(at("code-feedback.parquet"));
    expect(publicConfig.schema).toEqual([
      ["id", "BIGINT"],
      ["messages", MESSAGES_TYPE],
    ]);
    expect(publicConfig.rows).toEqual(jsonl(at("code-feedback.jsonl")));

    const fullConfig = await duckdbRead(at("code-feedback-full.parquet"));
    expect(fullConfig.schema).toEqual([
      ["id", "BIGINT"],
      ["dialogue_id", "VARCHAR"],
      ["method", "VARCHAR"],
      ["lang", "VARCHAR"],
      ["sources", "VARCHAR[]"],
      ["messages", MESSAGES_TYPE],
      ["system", "VARCHAR"],
      ["validation", "VARCHAR"],
      ["validation_tags", "VARCHAR[]"],
    ]);
    // same rows; DuckDB gives the Parquet column order, the JSONL its own
    const full = jsonl(at("code-feedback-full.jsonl"));
    expect(fullConfig.rows).toEqual(full);
    expect(fullConfig.rows.some((r) => r.system === SYSTEM_PROMPT)).toBe(true);

    const instructions = await duckdbRead(at("filtered-instruction.parquet"));
    expect(instructions.schema).toEqual(["query", "answer", "resource", "lang"].map((c) => [c, "VARCHAR"]));
    expect(instructions.rows).toEqual(jsonl(at("filtered-instruction.jsonl")));
  });

  it("keeps the system message in messages when stages.export.keep_system is set", async () => {
    const keep = tempDir("cf-export-");
    await exportRunner(keep, "  export: {keep_system: true, parquet: false}\n").run(["export"]);
    const lines = jsonl(join(exportDir(keep), "code-feedback.jsonl"));
    const withSystem = lines.filter((l) => (l.messages as { role: string }[])[0]!.role === "system");
    expect(withSystem).toHaveLength(1);
    expect((withSystem[0]!.messages as { content: string }[])[0]!.content).toBe(SYSTEM_PROMPT);
    // the ids do not depend on the switch
    expect(lines.map((l) => l.id)).toEqual(
      jsonl(join(exportDir(dir), "code-feedback.jsonl")).map((l) => l.id),
    );
  });

  it("writes a dataset card with hub metadata, counts per method and language, sources, licences, models and citations", async () => {
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
    expect(configs.map((c) => c.config_name)).toEqual([
      "code-feedback",
      "code-feedback-full",
      "filtered-instruction",
    ]);
    for (const c of configs) expect(existsSync(join(exportDir(dir), c.data_files[0]!.path))).toBe(true);
    const info = meta.dataset_info as { config_name: string; features: { name: string; dtype?: string }[] }[];
    expect(info[0]!.features[0]).toEqual({ name: "id", dtype: "int64" });
    expect(info.map((i) => i.config_name)).toEqual(configs.map((c) => c.config_name));
    expect(meta.dataset_info).toEqual(
      expect.arrayContaining([expect.objectContaining({ splits: [{ name: "train", num_examples: 6 }] })]),
    );
    // counts: the fixtures are packing, simulation and LeetCode dialogues; correct and follow-ups made none
    expect(card).toMatch(/\| single-turn-packing \| 2 \| 1\.5 \| 16,600 \| 2 \| \*\*-25%, over 20%\*\* \|/);
    expect(card).toMatch(/\| leetcode-similar-problem \| 1 \| 2 \| 303 \| 2\.2 \| -9% \|/);
    expect(card).toMatch(/\| code-correction \| 0 \| \|/);
    expect(card).toContain("This run does not reproduce the released dataset's per-method shape");
    expect(card).toContain(
      "Dialogue methods run: single-turn-packing, interaction-simulation, code-correction, leetcode-similar-problem, leetcode-follow-up.",
    );
    expect(card).toMatch(/\| interaction-simulation \| cpp \| 1 \|/);
    expect(card).toMatch(/\| python \| 2 \| 66\.67% \| 67\.07% \| -1% \|/);
    expect(card).toMatch(/\| javascript \| 1 \| 33\.33% \| 5\.82% \| \*\*\+473%, over 20%\*\* \|/);
    // every source a released row came from, with revision and commit: TACO through the LeetCode dialogue
    expect(card).toContain("| magicoder | [ise-uiuc/Magicoder-OSS-Instruct-75K]");
    expect(card).toMatch(/Magicoder-OSS-Instruct-75K\) \| `v1\.0` \| `111111111111` \| 2 \| 1 \| mit \|/);
    expect(card).toMatch(
      /Evol-Instruct-Code-80k-v1\) \| `main` \| `222222222222` \| 1 \| 0 \| not stated here/,
    );
    expect(card).toMatch(/\| taco \| \[BAAI\/TACO\][^\n]*`444444444444` \| 0 \| 1 \| apache-2\.0 \|/);
    expect(card).not.toContain("ajibawa-2023/Python-Code-23k-ShareGPT"); // fetched, but no released row from it
    expect(card).toContain("| weak (first answers in interaction simulation) | `test-weak-model` |");
    expect(card).toMatch(/\| not-runnable \| 1 \|/);
    const bibtex = /```bibtex\n([\s\S]*?)```/.exec(card)?.[1] ?? "";
    expect(bibtex).toContain("@article{zheng2024opencodeinterpreter,");
    expect(bibtex).toContain("arXiv:2402.14658");
    expect(bibtex).toContain("@article{wei2023magicoder,");
    expect(bibtex).toContain("@article{li2023taco,");
    expect(bibtex).toContain("@article{luo2023wizardcoder,");
  });

  it("goes on without a dialogue stage switched off, and the card says it was not run (disabled)", async () => {
    const off = tempDir("cf-export-");
    await exportRunner(off, "  leetcode: {enabled: false}\n  export: {parquet: false}\n").run(["export"]);
    const full = jsonl(join(exportDir(off), "code-feedback-full.jsonl"));
    expect(full.some((r) => r.method === "leetcode-similar-problem")).toBe(false);
    expect(full).toHaveLength(5);
    const card = readFileSync(join(exportDir(off), "README.md"), "utf8");
    expect(card).toContain(
      "Dialogue methods run: single-turn-packing, interaction-simulation, code-correction; not run (disabled): leetcode-similar-problem, leetcode-follow-up.",
    );
    expect(card).toMatch(/\| leetcode-similar-problem \| not run \(disabled\) \| \| 303 \| 2\.2 \| \|/);
    // no LeetCode dialogue released: TACO is not among the sources
    expect(card).not.toContain("BAAI/TACO");
    const stats = exportRunner(off).status("export").manifest!.stats as unknown as ExportSummary;
    expect(stats.dialogue_stages).toMatchObject({ leetcode: "not run (disabled)", pack: "ran" });
  });

  it("keeps the file list, sizes and hashes in the manifest, and the same bytes and ids on a rerun", async () => {
    const runner = exportRunner(dir);
    const stats = runner.status("export").manifest!.stats as unknown as ExportSummary;
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
    // the manifest is where they are kept: no side file in the work dir
    expect(readdirSync(join(exportDir(dir), "work"))).not.toContain("export-stats.json");

    await runner.run(["export"], { force: true });
    for (const [name, bytes] of Object.entries(before)) {
      // the manifest says when it was written; the release itself is byte-stable
      if (name === "manifest.json") continue;
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
