// Runs the named benchmarks, each in its own Node process with `pnpm pipeline`'s runtime flags (read
// from package.json), so a benchmark measures the code as users run it.
//   pnpm bench                      lists the benchmarks
//   pnpm bench llm [-- --runs 5]    runs one; arguments after the name go to the benchmark
//   pnpm bench all                  runs every one, in turn
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nodeArgs, REPO_ROOT } from "./node.js";

const BENCHMARKS: Record<string, { file: string; what: string }> = {
  ingest: { file: "ingest/ingest.ts", what: "download, normalize and dedup over a synthetic corpus" },
  llm: {
    file: "llm/throughput.ts",
    what: "the filter stage against the test LLM server (throughput, cache)",
  },
  "llm-replicas": {
    file: "llm/replicas.ts",
    what: "a role with three LLM replicas (equal, one slow, one dead) against one endpoint",
  },
  batch: {
    file: "batch/batch.ts",
    what: "filter and simulate with the roles in batch mode (Batches API of the test server) against online",
  },
  "llm-embedded": {
    file: "llm/embedded.ts",
    what: "the filter stage on the embedded provider against a raw node-llama-cpp loop",
  },
  eval: { file: "eval/grouping.ts", what: "grouped test programs against one program per case" },
  seal: {
    file: "store/seal.ts",
    what: "reading a complete stage checked against its seal against the same read unchecked",
  },
  "store-read": {
    file: "store/read.ts",
    what: "reading a filter-like stage's outputs and rejects: the store's reader against a line reader over a stream",
  },
  "store-sample": {
    file: "store/sample.ts",
    what: "a dialogue stage's seeded sample: chosen from the filter's output index against one read of its outputs",
  },
  review: {
    file: "review/review.ts",
    what: "the review app on a 500K-record stage: opening a record, applying a filter, against a plain read of its line",
  },
  sandbox: { file: "sandbox/run.ts", what: "sandboxed runs against bare toolchain runs" },
  "sandbox-compile": {
    file: "sandbox/compile.ts",
    what: "Go and Rust hello worlds and a testify go_test compiled in the sandbox (shared Go build cache) against bare builds",
  },
  "sandbox-mounts": {
    file: "sandbox/mounts.ts",
    what: "CPU to build and tear down a sandbox with its tools dir mounted whole against one bind per tool file",
  },
  "sandbox-server": {
    file: "sandbox/server-cpu.ts",
    what: "CPU a program costs through `sandbox serve` and its client against the embedded sandbox",
  },
  spawn: {
    file: "sandbox/spawn.ts",
    what: "CPU a host command costs its starter: our spawner process against Node's own spawn",
  },
  pack: { file: "pack/knn.ts", what: "kNN at 105K x 768 against brute force; the pack stage's peak RSS" },
  "pack-embed": { file: "pack/embed.ts", what: "embedding pipeline against a raw onnxruntime-node loop" },
  e2e: {
    file: "e2e/e2e.ts",
    what: "the whole job at S x 287,252 rows against the test hub and LLM servers; per stage rate, RSS, disk, time shares",
  },
  "e2e-alone": {
    file: "e2e/alone.ts",
    what: "one sandbox stage of a kept e2e run rerun alone: CPU per record of the stage and each server, time against its ideal",
  },
  simulate: {
    file: "simulate/throughput.ts",
    what: "simulate's dialogues/s against the ideal from LLM latency, concurrency and sandbox throughput",
  },
};

function main(argv: string[]): number {
  const [name, ...rest] = argv;
  const args = rest[0] === "--" ? rest.slice(1) : rest;
  if (!name || !(name === "all" || name in BENCHMARKS)) {
    if (name) process.stderr.write(`unknown benchmark '${name}'\n`);
    process.stdout.write("pnpm bench <name> [-- args]\n");
    for (const [key, b] of Object.entries(BENCHMARKS)) {
      process.stdout.write(`  ${key.padEnd(8)} bench/${b.file}: ${b.what}\n`);
    }
    return name ? 2 : 0;
  }
  for (const key of name === "all" ? Object.keys(BENCHMARKS) : [name]) {
    const script = `bench/${BENCHMARKS[key]!.file}`;
    process.stdout.write(`# ${key}: node ${nodeArgs(script).join(" ")}\n`);
    const run = spawnSync(process.execPath, nodeArgs(script, args), {
      stdio: "inherit",
      cwd: REPO_ROOT,
    });
    if (run.status !== 0) return run.status ?? 1;
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
