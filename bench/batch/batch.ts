// Batch mode against online: the filter and simulate stages at S x 287,252 rows, once with every role
// online (answered after `--latency-ms`) and once in batch mode against the test server's Batches API
// (each batch answered `--batch-delay-ms` after creation), sharing the ingest outputs. Per stage and
// mode: records, rounds, batches, requests per batch, the stage's own CPU, batch against online.
//   pnpm bench batch [-- --scale 0.1] [--latency-ms 200] [--batch-delay-ms 2000] [--dir DIR] [--keep]
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { BatchEntry } from "../../pipeline/llm/batch/ledger.js";
import type { Manifest } from "../../pipeline/store/manifest.js";
import { startTestHub } from "../../test/support/hub-server.js";
import { startLlmServer } from "../../test/support/llm-server.js";
import { numberArg, textArg } from "../args.js";
import { benchAnswer } from "../e2e/answers.js";
import { pipelineCommand, tail } from "../e2e/child.js";
import { configYaml } from "../e2e/config.js";
import { generateCorpus } from "../ingest/corpus.js";
import { REPO_ROOT } from "../node.js";

const scale = numberArg("scale", 0.1);
const latencyMs = numberArg("latency-ms", 200);
const batchDelayMs = numberArg("batch-delay-ms", 2000);
const keep = process.argv.includes("--keep");
const dir = textArg("dir") ?? mkdtempSync(path.join(tmpdir(), "cf-bench-batch-"));
const f = (x: number, digits = 0) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

process.stdout.write(
  `batch: scale ${scale} (${f(287_252 * scale)} rows), online latency ${latencyMs} ms, batch delay ${batchDelayMs} ms; ` +
    `${cpus().length} cores, load ${loadavg()
      .map((l) => f(l, 1))
      .join(" ")}; ${dir}\n`,
);
const sources = await generateCorpus(dir, scale);
cpSync(path.join(REPO_ROOT, "data/sample/BAAI/TACO"), path.join(dir, "hub/BAAI/TACO"), { recursive: true });
// the servers live in this process: the stages' CPU is measured in their own processes
const hub = await startTestHub({ root: path.join(dir, "hub") });
const llm = await startLlmServer({
  latencyMs,
  keepRequests: false,
  fallback: benchAnswer,
  batch: { delayMs: batchDelayMs },
});
const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "bench-batch" };
const log = path.join(dir, "bench.log");
const usageFile = path.join(dir, "usage.jsonl");
const dataOf = (mode: string) => path.join(dir, `data-${mode}`);
const configOf = (mode: string) => path.join(dir, `config-${mode}.yaml`);
const BATCH_ROLE = "{poll_s: 0.5, max_poll_s: 2, settle_s: 30}";
for (const mode of ["online", "batch"]) {
  let yaml = configYaml(
    { dir, dataDir: dataOf(mode), scale, llmConcurrency: 64, workers: 2 },
    sources,
    hub.url,
  );
  if (mode === "batch") {
    // each role's line gains its batch settings
    yaml = yaml.replace(
      /^( {2}(scorer|weak|strong): \{.*)\}$/gm,
      `$1, batch: {provider: openai, ${BATCH_ROLE.slice(1)}}`,
    );
  }
  writeFileSync(configOf(mode), yaml);
}

const run = async (mode: string, stage: string) => {
  const result = await pipelineCommand(["run", stage, "--only", "--config", configOf(mode)], {
    env,
    log,
    usageFile,
  });
  if (result.code !== 0)
    throw new Error(`${mode} ${stage} exited with ${result.code}; the end of ${log}:\n${tail(log)}`);
  return result;
};

interface Measure {
  records: number;
  requests: number;
  rounds: number;
  batches: number;
  cpuS: number;
  wallS: number;
}

const measure = async (mode: string, stage: string): Promise<Measure> => {
  llm.reset();
  const result = await run(mode, stage);
  const requests = llm.count;
  const noop = await run(mode, stage);
  const stageDir = path.join(dataOf(mode), stage);
  const manifest = JSON.parse(readFileSync(path.join(stageDir, "manifest.json"), "utf8")) as Manifest;
  const ledger = path.join(stageDir, "batch");
  const entries: BatchEntry[] = existsSync(ledger)
    ? readdirSync(ledger)
        .filter((n) => n.endsWith(".batch.json"))
        .map((n) => JSON.parse(readFileSync(path.join(ledger, n), "utf8")) as BatchEntry)
    : [];
  return {
    records: manifest.counts.in,
    requests,
    rounds: entries.reduce((most, e) => Math.max(most, e.round), 0),
    batches: entries.length,
    cpuS: Math.max(0, result.cpuS - noop.cpuS),
    wallS: manifest.elapsedMs / 1000,
  };
};

try {
  for (const stage of ["download", "normalize", "dedup"]) await run("online", stage);
  // the batch run starts from the same ingest outputs, with no LLM answer cached
  for (const stage of ["download", "normalize", "dedup"]) {
    cpSync(path.join(dataOf("online"), stage), path.join(dataOf("batch"), stage), { recursive: true });
  }
  const rows: string[][] = [];
  for (const stage of ["filter", "simulate"]) {
    const online = await measure("online", stage);
    const batch = await measure("batch", stage);
    for (const [mode, m] of [
      ["online", online],
      ["batch", batch],
    ] as const) {
      rows.push([
        stage,
        mode,
        f(m.records),
        f(m.requests),
        m.batches ? f(m.rounds) : "-",
        m.batches ? f(m.batches) : "-",
        m.batches ? f(m.requests / m.batches) : "-",
        f(m.cpuS, 1),
        f(m.wallS, 1),
        mode === "batch" ? `${f(m.cpuS / online.cpuS, 2)}x` : "",
      ]);
    }
    if (batch.records !== online.records || batch.requests !== online.requests) {
      throw new Error(
        `${stage}: batch mode made ${batch.records} records with ${batch.requests} requests, online ${online.records} with ${online.requests}`,
      );
    }
  }
  const header = [
    "stage",
    "mode",
    "records",
    "requests",
    "rounds",
    "batches",
    "req/batch",
    "CPU s",
    "wall s",
    "CPU vs online",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows]) {
    process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join("  ")}\n`);
  }
} finally {
  await Promise.all([hub.close(), llm.close()]);
  if (!keep && !textArg("dir")) rmSync(dir, { recursive: true, force: true });
}
