// The pipeline's configuration for the benchmark: the generated corpus and the TACO sample from the
// local hub, every role on the local LLM server (its URL comes from $OPENAI_BASE_URL, as a user's
// would), the lexical embedder, and dialogue counts scaled like the corpus (the paper's 51K simulated
// and 500 corrected dialogues at S = 1). Python only, as the paper packed and simulated it: the
// answers the server writes are Python.
import path from "node:path";
import type { GeneratedSource } from "../ingest/corpus.js";

export interface BenchSettings {
  dir: string;
  scale: number;
  /** requests in flight per LLM role */
  llmConcurrency: number;
  /** programs in the sandbox at once */
  workers: number;
  /** default: `<dir>/data` */
  dataDir?: string;
  /** `--sandbox-server`: a `pipeline sandbox serve` process's URL; default: the embedded sandbox */
  sandboxUrl?: string;
}

export const TACO_FILES = ["ALL/train-*.parquet", "ALL/test-*.parquet"];

export function configYaml(s: BenchSettings, sources: GeneratedSource[], hubUrl: string): string {
  const role = (model: string) =>
    `  ${model}: {provider: openai, model: bench-${model}, concurrency: ${s.llmConcurrency}, timeout_s: 600}`;
  const source = (g: GeneratedSource) =>
    `      - {name: ${g.shape.name}, adapter: ${g.shape.name}, repo: ${g.repo}, files: [${path.basename(g.file)}]}`;
  const benchmark = (name: string) =>
    `      - {name: ${name}, repo: bench/prompts, files: [${name}.jsonl], text_field: prompt, id_field: task_id}`;
  const dialogues = (paper: number) => Math.max(1, Math.round(paper * s.scale));
  return [
    `data_dir: ${s.dataDir ?? path.join(s.dir, "data")}`,
    "hub:",
    `  endpoint: ${hubUrl}`,
    "llm:",
    role("scorer"),
    role("weak"),
    role("strong"),
    "sandbox:",
    // a server says its workers, and the stages keep twice that in flight, so a run waits there
    // whenever a worker frees (docs/sandbox.md, Scaling out)
    ...(s.sandboxUrl ? [`  url: ${s.sandboxUrl}`] : [`  workers: ${s.workers}`]),
    "stages:",
    "  download:",
    "    sources:",
    ...sources.map(source),
    `      - {name: taco, adapter: none, repo: BAAI/TACO, files: [${TACO_FILES.map((f) => `"${f}"`).join(", ")}]}`,
    "  dedup:",
    "    benchmarks:",
    benchmark("humaneval"),
    benchmark("mbpp"),
    "  pack:",
    "    languages: [python]",
    "    embedder: {kind: lexical}",
    "  simulate:",
    "    languages: [python]",
    `    count: ${dialogues(51_000)}`,
    "  correct:",
    "    languages: [python]",
    `    count: ${dialogues(500)}`,
    "",
  ].join("\n");
}
