// Ingest benchmark: a synthetic corpus in the four real formats served as a hub directory, then each
// phase in its own process (its CPU and peak RSS its own): a raw streaming copy (the floor), the real
// download, normalize and dedup stages, and a read of normalize's records (dedup's floor), with the
// targets. `--shards N` then runs normalize as N shard processes: docs/BENCHMARKS.md, "Ingest".
//   pnpm exec tsx bench/ingest/ingest.ts [--scale 0.1] [--shards 4] [--keep] [--dir DIR]
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../pipeline/config/load.js";
import { silentLogger } from "../../pipeline/log.js";
import { parseShardSpec, type ShardSpec } from "../../pipeline/runner/shard.js";
import { Runner } from "../../pipeline/runner.js";
import { createServices } from "../../pipeline/services.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { STAGES } from "../../stages/index.js";
import { textArg } from "../args.js";
import { corpusLayout, type GeneratedSource, generateCorpus } from "./corpus.js";
import { streamingCopy } from "./streaming-copy.js";

interface PhaseResult {
  /** wall-clock seconds */
  seconds: number;
  /** when the phase started and ended, in milliseconds since the epoch (phases side by side) */
  from: number;
  to: number;
  /** user + system CPU seconds of the phase: the per-core cost, unaffected by other load on the machine */
  cpuSeconds: number;
  maxRssMiB: number;
  rows: number;
  extra?: Record<string, unknown>;
}

let cpuAtStart = process.cpuUsage();

function start(): number {
  cpuAtStart = process.cpuUsage();
  return performance.now();
}

function finish(started: number, rows: number, extra?: Record<string, unknown>): PhaseResult {
  const cpu = process.cpuUsage(cpuAtStart);
  const ended = performance.now();
  return {
    seconds: (ended - started) / 1000,
    from: performance.timeOrigin + started,
    to: performance.timeOrigin + ended,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    rows,
    ...(extra ? { extra } : {}),
  };
}

async function phaseCopy(dir: string, sources: GeneratedSource[]): Promise<PhaseResult> {
  const started = start();
  const rows = await streamingCopy(
    sources.map((s) => s.plain),
    path.join(dir, "copy.jsonl"),
  );
  return finish(started, rows);
}

/** The config of the sharded normalize: the same, over its own data directory. */
const SHARDED_CONFIG = "config-shards.yaml";

/** The pipeline's config for the corpus: its four sources and two benchmark sets, all from `hub/`. */
function configYaml(dir: string, sources: GeneratedSource[], data = "data"): string {
  const source = (s: GeneratedSource) =>
    `      - {name: ${s.shape.name}, adapter: ${s.shape.name}, repo: ${s.repo}, files: [${path.basename(s.file)}]}`;
  const benchmark = (name: string) =>
    `      - {name: ${name}, repo: bench/prompts, files: [${name}.jsonl], text_field: prompt, id_field: task_id}`;
  return [
    `data_dir: ${path.join(dir, data)}`,
    "hub:",
    `  endpoint: file:${path.join(dir, "hub")}`,
    "stages:",
    "  download:",
    "    sources:",
    ...sources.map(source),
    "  dedup:",
    "    benchmarks:",
    benchmark("humaneval"),
    benchmark("mbpp"),
    "",
  ].join("\n");
}

function runnerOf(file: string): { runner: Runner; close: () => Promise<void> } {
  const loaded = loadConfig({ file, sets: [] });
  const services = createServices(loaded.config, { dataDir: loaded.config.data_dir, log: silentLogger });
  const runner = new Runner(STAGES, loaded, {
    services,
    log: silentLogger,
    progressStream: { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream,
  });
  return { runner, close: () => services.close() };
}

/**
 * Runs one stage of the pipeline as `pnpm pipeline run STAGE` would (with `shard`, as `run STAGE
 * --shard K/N` would), its upstream being complete.
 */
async function phaseStage(
  dir: string,
  stage: string,
  config: string,
  shard?: ShardSpec,
): Promise<PhaseResult> {
  const { runner, close } = runnerOf(path.join(dir, config));
  const started = start();
  const [report] = await runner.run([stage], shard ? { shard } : { only: true });
  await close();
  const counts = report!.counts!;
  return finish(started, counts.in, {
    out: counts.out,
    rejected: counts.rejected,
    ...(report!.stats ? { stats: report!.stats } : {}),
  });
}

async function phaseRead(dir: string): Promise<PhaseResult> {
  const started = start();
  let rows = 0;
  let chars = 0;
  for await (const record of new StageStore(path.join(dir, "data"), "normalize").read()) {
    chars += (record.query as string).length;
    rows++;
  }
  return finish(started, rows, { chars });
}

/** Runs one phase in a child process of its own; `wall` is the child's, Node's start-up included. */
function runPhase(
  phase: string,
  dir: string,
  scale: number,
  args: string[] = [],
): Promise<PhaseResult & { wall: number }> {
  const self = fileURLToPath(import.meta.url);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...process.execArgv, self, "--phase", phase, "--dir", dir, "--scale", String(scale), ...args],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => {
      if (status !== 0) reject(new Error(`phase ${phase} failed with status ${status}`));
      else {
        const result = JSON.parse(stdout.trim().split("\n").pop()!) as PhaseResult;
        resolve({ ...result, wall: (performance.now() - started) / 1000 });
      }
    });
  });
}

function describe(r: PhaseResult): string {
  return `${r.cpuSeconds.toFixed(2)} CPU s (${r.seconds.toFixed(2)}s wall), ${(r.rows / r.cpuSeconds).toFixed(0)} rows per CPU s, peak RSS ${r.maxRssMiB.toFixed(0)} MiB`;
}

function verdict(ok: boolean): string {
  return ok ? "ok" : "MISSED";
}

async function main(): Promise<void> {
  const scale = Number(textArg("scale") ?? "1");
  const phase = textArg("phase");
  if (phase) {
    const dir = textArg("dir")!;
    const shard = textArg("shard");
    const result =
      phase === "copy"
        ? await phaseCopy(dir, corpusLayout(dir, scale))
        : phase === "read"
          ? await phaseRead(dir)
          : await phaseStage(
              dir,
              phase,
              textArg("config") ?? "config.yaml",
              shard === undefined ? undefined : parseShardSpec(shard),
            );
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }

  const dir = textArg("dir") ?? (await mkdtemp(path.join(tmpdir(), "bench-ingest-")));
  const keep = process.argv.includes("--keep");
  const shards = Number(textArg("shards") ?? "1");
  try {
    const t0 = performance.now();
    const generated = await generateCorpus(dir, scale);
    await writeFile(path.join(dir, "config.yaml"), configYaml(dir, generated));
    await writeFile(path.join(dir, SHARDED_CONFIG), configYaml(dir, generated, "data-shards"));
    const mb = generated.reduce((sum, g) => sum + g.bytes, 0) / 1e6;
    const rows = generated.reduce((sum, g) => sum + g.rows, 0);
    console.log(
      `corpus: ${rows} rows, ${mb.toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)}s (${dir})`,
    );

    const copy = await runPhase("copy", dir, scale);
    const download = await runPhase("download", dir, scale);
    const normalize = await runPhase("normalize", dir, scale);
    const read = await runPhase("read", dir, scale);
    const dedup = await runPhase("dedup", dir, scale);

    const ratio = normalize.cpuSeconds / copy.cpuSeconds;
    const wallRatio = normalize.seconds / copy.seconds;
    const docsPerSecond = dedup.rows / dedup.cpuSeconds;
    console.log(`raw copy (floor):   ${describe(copy)}`);
    console.log(
      `download stage:     ${download.cpuSeconds.toFixed(2)} CPU s (${download.seconds.toFixed(2)}s wall) for ${mb.toFixed(0)} MB, peak RSS ${download.maxRssMiB.toFixed(0)} MiB`,
    );
    console.log(`normalize stage:    ${describe(normalize)}; ${JSON.stringify(normalize.extra)}`);
    console.log(`read floor (dedup): ${describe(read)}`);
    console.log(`dedup stage:        ${describe(dedup)}; ${JSON.stringify(dedup.extra)}`);
    console.log("");
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${cpus().length} cores`,
    );
    console.log(
      `normalize / raw copy      ${ratio.toFixed(2)}x CPU, ${wallRatio.toFixed(2)}x wall   (target <= 1.5x)  ${verdict(ratio <= 1.5)}`,
    );
    console.log(
      `normalize peak RSS        ${normalize.maxRssMiB.toFixed(0)} MiB (target <= 1024)  ${verdict(normalize.maxRssMiB <= 1024)}`,
    );
    console.log(
      `dedup docs/s/core         ${docsPerSecond.toFixed(0)} per CPU second, ${(dedup.rows / dedup.seconds).toFixed(0)} per wall second   (target >= 10000)  ${verdict(docsPerSecond >= 10_000)}`,
    );
    console.log(`dedup / read floor        ${(dedup.cpuSeconds / read.cpuSeconds).toFixed(2)}x CPU`);
    console.log(
      `dedup peak RSS            ${dedup.maxRssMiB.toFixed(0)} MiB (target <= 2048)  ${verdict(dedup.maxRssMiB <= 2048)}`,
    );
    if (shards > 1) await shardedNormalize(dir, scale, shards, normalize);
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * normalize again as `shards` shards over a second data directory (its own download first), each
 * shard its own process: their CPU summed against the one process's (each shard reads every row and
 * parses its own), and the merged output against the one process's.
 */
async function shardedNormalize(dir: string, scale: number, shards: number, one: PhaseResult): Promise<void> {
  await runPhase("download", dir, scale, ["--config", SHARDED_CONFIG]);
  const runs: PhaseResult[] = [];
  for (let k = 0; k < shards; k++)
    runs.push(
      await runPhase("normalize", dir, scale, ["--config", SHARDED_CONFIG, "--shard", `${k}/${shards}`]),
    );
  const cpu = runs.reduce((sum, r) => sum + r.cpuSeconds, 0);
  const wall = runs.reduce((sum, r) => sum + r.seconds, 0);
  const manifestOf = async (file: string) => {
    const { runner, close } = runnerOf(path.join(dir, file));
    const manifest = runner.status("normalize").manifest;
    await close();
    return manifest;
  };
  const single = await manifestOf("config.yaml");
  const sharded = await manifestOf(SHARDED_CONFIG);
  const same = single?.outputHash !== undefined && single.outputHash === sharded?.outputHash;
  console.log("");
  console.log(
    `normalize as ${shards} shards, one process each: ${runs.map((r) => `${r.cpuSeconds.toFixed(2)}`).join(" + ")} CPU s (${runs.map((r) => r.rows).join(" + ")} rows)`,
  );
  console.log(
    `${shards} shards / one process  ${(cpu / one.cpuSeconds).toFixed(2)}x CPU summed (${cpu.toFixed(2)} vs ${one.cpuSeconds.toFixed(2)} s), ` +
      `${(wall / one.seconds).toFixed(2)}x wall summed; one shard ${(runs[0]!.cpuSeconds / one.cpuSeconds).toFixed(2)}x CPU (ideal ${(1 / shards).toFixed(2)}x)`,
  );
  console.log(
    `merged output vs one process: ${same ? "identical (output hash)" : `DIFFERENT (${JSON.stringify(single?.counts)} vs ${JSON.stringify(sharded?.counts)})`}`,
  );

  // wall clock: the same stage over the same directory, reset, in one process and then as the N
  // shard processes started together (the stage's own time in each, and whole processes)
  const stageDir = path.join(dir, "data-shards", "normalize");
  await rm(stageDir, { recursive: true, force: true });
  const alone = await runPhase("normalize", dir, scale, ["--config", SHARDED_CONFIG]);
  await rm(stageDir, { recursive: true, force: true });
  const load = loadavg()[0]!;
  const together = await Promise.all(
    Array.from({ length: shards }, (_, k) =>
      runPhase("normalize", dir, scale, ["--config", SHARDED_CONFIG, "--shard", `${k}/${shards}`]),
    ),
  );
  const stageWall =
    (Math.max(...together.map((r) => r.to)) - Math.min(...together.map((r) => r.from))) / 1000;
  const processWall = Math.max(...together.map((r) => r.wall));
  const speedup = alone.seconds / stageWall;
  const sideBySide = (await manifestOf(SHARDED_CONFIG))?.outputHash;
  console.log(
    `${shards} shards side by side / one process  ${speedup.toFixed(2)}x faster, wall (the stage: ${stageWall.toFixed(2)} vs ${alone.seconds.toFixed(2)} s; ` +
      `whole processes, Node start-up included: ${(alone.wall / processWall).toFixed(2)}x, ${processWall.toFixed(2)} vs ${alone.wall.toFixed(2)} s)   ` +
      `(target >= ${(0.8 * shards).toFixed(1)}x with a core per shard; ${cpus().length} cores, load average ${load.toFixed(1)} at the start)`,
  );
  console.log(
    `merged output of the shards side by side vs one process: ${sideBySide !== undefined && sideBySide === single?.outputHash ? "identical (output hash)" : "DIFFERENT"}`,
  );
}

await main();
