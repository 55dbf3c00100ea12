// The whole chain through the CLI: `pnpm pipeline run export --config configs/sample.yaml` against the
// local OpenAI-compatible test server, from download to the released files. Checks every file under
// <data_dir>/export/ (each Code-Feedback line has only an integer id and user/assistant messages), the
// card's sources (TACO among them), that validate's manifest holds the outcome table, that the report
// written after the run has export's own row, and that a forced rerun of export writes the same bytes.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { StageStore } from "../../pipeline/store/stage-store.js";
import type { ValidateSummary } from "../../stages/validate/summary.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";
import { cli, SECRET } from "./kit.js";

const RELEASE = [
  "README.md",
  "code-feedback.jsonl",
  "code-feedback.parquet",
  "code-feedback-full.jsonl",
  "code-feedback-full.parquet",
  "filtered-instruction.jsonl",
  "filtered-instruction.parquet",
];

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("pipeline run export (sample config, local LLM server)", () => {
  let server: LlmServer;
  const dir = tempDir("cf-export-e2e-");
  const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: SECRET });
  const exportDir = () => join(dir, "export");

  beforeAll(async () => {
    server = await startLlmServer({ latencyMs: 5, requireKey: SECRET });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("runs every stage from download to export and writes the release", async () => {
    const run = await cli(dir, ["run", "export"], env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain(SECRET);
    for (const stage of [
      "download",
      "filter",
      "pack",
      "simulate",
      "correct",
      "leetcode",
      "validate",
      "export",
    ]) {
      expect(new StageStore(dir, stage).manifest()?.state, stage).toBe("complete");
    }
    const names = readdirSync(exportDir());
    for (const name of RELEASE) expect(names).toContain(name);
    expect(names.some((n) => /\.tmp-\d+$/.test(n))).toBe(false);

    const dialogues = lines(join(exportDir(), "code-feedback.jsonl"));
    expect(dialogues.length).toBeGreaterThan(0);
    for (const d of dialogues) {
      expect(Object.keys(d)).toEqual(["id", "messages"]);
      expect(Number.isSafeInteger(d.id)).toBe(true);
      for (const m of d.messages as Record<string, unknown>[]) {
        expect(Object.keys(m)).toEqual(["role", "content"]);
        expect(["user", "assistant"]).toContain(m.role);
      }
    }
    const pairs = lines(join(exportDir(), "filtered-instruction.jsonl"));
    expect(pairs).toHaveLength(new StageStore(dir, "filter").manifest()!.counts.out);
    for (const p of pairs) expect(Object.keys(p)).toEqual(["query", "answer", "resource", "lang"]);
    const read = async (name: string) =>
      parquetReadObjects({ file: await asyncBufferFromFile(join(exportDir(), name)) });
    expect((await read("code-feedback.parquet")).map((r) => ({ ...r, id: Number(r.id as bigint) }))).toEqual(
      dialogues,
    );
    expect(await read("filtered-instruction.parquet")).toEqual(pairs);

    const card = readFileSync(join(exportDir(), "README.md"), "utf8");
    const meta = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(card)![1]!) as {
      configs: unknown[];
      license: string;
    };
    expect(meta.configs).toHaveLength(3);
    expect(card).toContain("## Sources and licences");
    // most sample dialogues come from TACO through the LeetCode stage: the card names it
    expect(card).toMatch(/\| taco \| \[BAAI\/TACO\]/);
    expect(card).toContain("@article{zheng2024opencodeinterpreter,");
    expect(card).toContain("Qwen/Qwen-72B-Chat");

    const summary = new StageStore(dir, "validate").manifest()!.stats as unknown as ValidateSummary;
    expect(summary.dialogues.kept).toBe(dialogues.length);
    expect(Object.keys(summary.by_method).length).toBeGreaterThan(0);

    // the CLI writes the run report after the run, from export's final manifest: not 0/0
    const report = readFileSync(join(exportDir(), "report.html"), "utf8");
    expect(report).toContain("code-feedback.jsonl");
    const files = new StageStore(dir, "export").manifest()!.counts.out;
    expect(files).toBeGreaterThan(0);
    expect(report).toMatch(
      new RegExp(
        `<tr><td>export</td><td>complete</td><td class="num">[^<]*</td><td class="num">${files}</td>`,
      ),
    );
    expect(run.stderr).toContain("report.html");
    expect(report).not.toMatch(/\bsrc=|\bhref=|https?:/);
  });

  it("a forced export writes the same bytes, and sends nothing to the LLM", async () => {
    const before = Object.fromEntries(RELEASE.map((n) => [n, readFileSync(join(exportDir(), n))]));
    const sent = server.count;
    const run = await cli(dir, ["run", "export", "--force"], env());
    expect(run.code, run.stderr).toBe(0);
    for (const name of RELEASE)
      expect(readFileSync(join(exportDir(), name)).equals(before[name]!), name).toBe(true);
    expect(server.count).toBe(sent);
  });
});
