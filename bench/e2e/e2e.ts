// The paper-scale benchmark: the whole job, download to export and report, on a synthetic corpus at
// S x 287,252 rows (bench/ingest/corpus.ts) plus the TACO sample, with the local hub and LLM test
// servers and the lexical embedder, each stage as its own `pipeline run <stage> --only` process: per
// stage records/s, peak RSS, disk and where the time went, against ideals measured in the same run
// (ideal.ts). Options and figures: docs/BENCHMARKS.md, "End to end".
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { defaultWorkers } from "../../pipeline/sandbox/index.js";
import type { Manifest } from "../../pipeline/store/manifest.js";
import { STAGES as REGISTRY } from "../../stages/index.js";
import { textArg } from "../args.js";
import { generateCorpus } from "../ingest/corpus.js";
import { pipelineArgs, REPO_ROOT } from "../node.js";
import { type CommandResult, diskBytes, pipelineCommand, tail } from "./child.js";
import { configYaml } from "./config.js";
import { CpuGroup, CpuMeter, type CpuShares } from "./cpu.js";
import { type Ideal, idealOf } from "./ideal.js";
import { startSandboxServer, startServers } from "./servers-process.js";

/** The stages in the registry's order, which runs each after the ones it reads. */
const STAGES = REGISTRY.map((s) => s.name);
const RECORD_WISE = REGISTRY.filter((s) => s.kind === "record").map((s) => s.name);
const GIB = 1024;

/** The word after `--name`, or `fallback`. */
const arg = (name: string, fallback: string): string => textArg(name) ?? fallback;

function positive(name: string, fallback: string): number {
  const value = Number(arg(name, fallback));
  if (!(value > 0)) {
    process.stderr.write(`--${name} must be a positive number (got '${arg(name, fallback)}')\n`);
    process.exit(2);
  }
  return value;
}

const f = (x: number, digits = 0) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (x: number) => `${f(100 * x, 0)}%`;
const verdict = (ok: boolean) => (ok ? "ok" : "MISSED");

interface StageResult {
  stage: string;
  run: CommandResult;
  /** the same command again, the stage now complete: starting Node, loading the code, checking the
   * manifests. Its CPU time is taken off the stage's, so the ratios are of the stage's own work. */
  noop: CommandResult;
  /** the stage's CPU seconds without the process's start-up */
  cpuS: number;
  /** the stage's own wall time, as its manifest counts it (start-up not included) */
  wallS: number;
  manifest: Manifest | undefined;
  diskMiB: number;
  ideal: Ideal;
  /** where the machine's CPU went while the stage ran */
  cpu: CpuShares;
  /** the sandbox alone, programs/s: the better of the first measure and the one after this stage */
  sandboxRate: number;
}

function baseline(args: string[]): Record<string, number> {
  const script = path.join(REPO_ROOT, "bench/e2e/baselines.ts");
  const child = spawnSync(process.execPath, [...process.execArgv, script, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (child.status !== 0) throw new Error(`baseline ${args[0]} failed with status ${child.status}`);
  return JSON.parse(child.stdout.trim().split("\n").pop()!);
}

function readManifest(dataDir: string, stage: string): Manifest | undefined {
  const file = path.join(dataDir, stage, "manifest.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Manifest) : undefined;
}

async function main(): Promise<void> {
  const scale = positive("scale", "0.01");
  const shards = Math.round(positive("shards", "1"));
  const until = arg("until", "export");
  if (!STAGES.includes(until)) {
    process.stderr.write(`--until must name a stage (${STAGES.join(", ")}); got '${until}'\n`);
    process.exit(2);
  }
  const stages = STAGES.slice(0, STAGES.indexOf(until) + 1);
  const latencyS = positive("latency-ms", "500") / 1000;
  const llmConcurrency = Math.round(positive("llm-concurrency", "128"));
  const workers = Math.round(positive("workers", String(defaultWorkers())));
  const dir = path.resolve(arg("dir", "") || mkdtempSync(path.join(tmpdir(), "bench-e2e-")));
  const keep = process.argv.includes("--keep");
  const dataDir = path.join(dir, "data");
  const log = path.join(dir, "pipeline.log");
  const usageFile = path.join(dir, "usage.jsonl");
  const config = path.join(dir, "config.yaml");

  process.stdout.write(
    `e2e: scale ${scale} (${f(287_252 * scale)} rows), LLM latency ${latencyS * 1000} ms, ${llmConcurrency} requests in flight per role, ` +
      `${workers} sandbox workers; ${cpus().length} cores, ${f(totalmem() / 2 ** 30, 0)} GiB, load ${loadavg()
        .map((l) => f(l, 1))
        .join(" ")}; ${dir}\n`,
  );
  const t0 = performance.now();
  const sources = await generateCorpus(dir, scale);
  cpSync(path.join(REPO_ROOT, "data/sample/BAAI/TACO"), path.join(dir, "hub/BAAI/TACO"), { recursive: true });
  const corpusMB = sources.reduce((sum, s) => sum + s.bytes, 0) / 1e6;
  process.stdout.write(
    `corpus: ${f(sources.reduce((sum, s) => sum + s.rows, 0))} rows, ${f(corpusMB, 1)} MB in ${f((performance.now() - t0) / 1000, 1)} s\n`,
  );

  const copy = baseline(["copy", "--dir", dir, "--scale", String(scale)]);
  // the sandbox alone: a few seconds of programs, measured again after each stage that ran some (the
  // better of the two is its ideal's rate: one measure moves by a third from one to the next here)
  const sandboxAlone = () =>
    baseline(["sandbox", "--workers", String(workers), "--runs", String(Math.max(300, 100 * workers))])
      .perSecond!;
  const sandbox = { perSecond: sandboxAlone() };
  process.stdout.write(
    `baselines: streaming copy ${f(copy.cpuS!, 2)} CPU s for ${f(copy.rows!)} rows; sandbox alone ${f(sandbox.perSecond!, 1)} programs/s\n\n`,
  );

  const servers = await startServers(path.join(dir, "hub"), latencyS * 1000);
  const serverMode = process.argv.includes("--sandbox-server");
  const serverGroup = serverMode ? CpuGroup.create("sandbox-server") : undefined;
  const sandboxServer = serverMode ? await startSandboxServer(dir, workers, serverGroup) : undefined;
  const meter = new CpuMeter({ llm: servers.pid, sandboxServer: sandboxServer?.pid }, serverGroup);
  if (sandboxServer) process.stdout.write(`sandbox: its own server process, ${sandboxServer.url}\n`);
  const sandboxUrl = sandboxServer ? { sandboxUrl: sandboxServer.url } : {};
  const env = { OPENAI_BASE_URL: servers.llm, OPENAI_API_KEY: "bench-e2e" };
  writeFileSync(
    config,
    configYaml({ dir, scale, llmConcurrency, workers, ...sandboxUrl }, sources, servers.hub),
  );
  const results: StageResult[] = [];
  try {
    for (const stage of stages) {
      // embedded, the sandboxes are the stage process's children: counted in a group of its own
      const stageGroup = serverMode ? undefined : CpuGroup.create(stage);
      const before = meter.probe(stageGroup);
      const run = await pipelineCommand(["run", stage, "--only", "--config", config], {
        env,
        log,
        usageFile,
        started: (pid) => stageGroup?.add(pid),
      });
      const cpu = meter.shares(before, meter.probe(stageGroup), run.cpuS, stageGroup);
      await stageGroup?.remove();
      if (run.code !== 0)
        throw new Error(`${stage} exited with ${run.code}; the end of ${log}:\n${tail(log)}`);
      const manifest = readManifest(dataDir, stage);
      const noop = await pipelineCommand(["run", stage, "--only", "--config", config], {
        env,
        log,
        usageFile,
      });
      const wallS = (manifest?.elapsedMs ?? run.wallS * 1000) / 1000;
      const cpuS = Math.max(0, run.cpuS - noop.cpuS);
      const after = manifest?.sandbox?.runs ? sandboxAlone() : undefined;
      const sandboxRate = Math.max(sandbox.perSecond, after ?? 0);
      const ideal = idealOf({
        stage,
        wallS,
        requests: manifest?.usage?.requests ?? 0,
        latencyS,
        llmConcurrency,
        sandbox: manifest?.sandbox,
        sandboxRate,
        workers,
      });
      const result = {
        stage,
        run,
        noop,
        cpuS,
        wallS,
        manifest,
        diskMiB: diskBytes(path.join(dataDir, stage)) / 2 ** 20,
        ideal,
        cpu,
        sandboxRate,
      };
      results.push(result);
      process.stdout.write(`${describe(result)}\n`);
    }
    const report = path.join(dataDir, "export", "report.html");
    if (until === "export") process.stdout.write(`report: ${existsSync(report) ? report : "not written"}\n`);
    process.stdout.write("\n");
    const llm = await servers.count();
    process.stdout.write(`LLM server: ${f(llm.requests)} requests, at most ${f(llm.maxInFlight)} at once\n`);
    summarize(results, copy, scale);
    if (shards > 1) {
      const sharded = path.join(dir, "config-shards.yaml");
      writeFileSync(
        sharded,
        configYaml(
          { dir, scale, llmConcurrency, workers, dataDir: path.join(dir, "data-shards"), ...sandboxUrl },
          sources,
          servers.hub,
        ),
      );
      await compareShards(results, shards, {
        workers: serverMode ? 0 : workers,
        serverWorkers: serverMode ? workers : 0,
        dir,
        config: sharded,
        single: config,
        env,
        log,
        usageFile,
        stages,
      });
    }
  } finally {
    servers.stop();
    await sandboxServer?.stop();
    await serverGroup?.remove();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

function describe(r: StageResult): string {
  const counts = r.manifest?.counts;
  const rate = counts ? counts.in / r.wallS : 0;
  const usage = r.manifest?.usage;
  const shares = r.ideal.share;
  return (
    `${r.stage.padEnd(9)} ${f(r.wallS, 1).padStart(7)} s  in ${f(counts?.in ?? 0).padStart(7)} out ${f(counts?.out ?? 0).padStart(7)} ` +
    `rejected ${f(counts?.rejected ?? 0).padStart(6)} failed ${f(counts?.failed ?? 0)}  ${f(rate, 1).padStart(8)} records/s  ` +
    `peak RSS ${f(r.run.peakRssMiB).padStart(5)} MiB  disk ${f(r.diskMiB, 1).padStart(7)} MiB  CPU ${f(r.cpuS, 1)} s (+${f(r.noop.cpuS, 1)} start-up)  ` +
    `LLM ${f(usage?.requests ?? 0)} req  sandbox ${f(r.manifest?.sandbox?.runs ?? 0)} runs (${f((r.manifest?.sandbox?.busyMs ?? 0) / 1000, 1)} s busy)  ` +
    `time: LLM ${pct(shares.llm)} sandbox ${pct(shares.sandbox)} pipeline ${pct(shares.pipeline)}` +
    (r.ideal.overhead === undefined
      ? ""
      : `  (${r.ideal.bound}-bound ideal ${f(r.ideal.idealS, 1)} s${r.manifest?.sandbox?.runs ? ` at ${f(r.sandboxRate, 1)} programs/s` : ""}, overhead ${pct(r.ideal.overhead)})`) +
    `\n${" ".repeat(10)}${cpuLine(r)}`
  );
}

/** Where the machine's CPU went during the stage: every busy second, and the idle rest. */
function cpuLine(r: StageResult): string {
  const c = r.cpu;
  const busy = c.stageS + c.llmServerS + c.sandboxServerS + (c.programsS ?? 0) + c.otherS;
  const records = r.manifest?.counts.in ?? 0;
  const perRecord =
    records > 0 && (r.manifest?.usage?.requests || r.manifest?.sandbox?.runs)
      ? `; a record: stage ${f((1000 * r.cpuS) / records, 1)} ms, LLM server ${f((1000 * c.llmServerS) / records, 1)} ms, sandbox server ${f((1000 * c.sandboxServerS) / records, 1)} ms` +
        (c.programsS === undefined ? "" : `, sandboxes ${f((1000 * c.programsS) / records, 1)} ms`)
      : "";
  return (
    `CPU s: stage ${f(c.stageS, 1)} (start-up ${f(r.noop.cpuS, 1)} of it), LLM server ${f(c.llmServerS, 1)}, ` +
    `sandbox server ${f(c.sandboxServerS, 1)}, sandboxes ${c.programsS === undefined ? "not measured" : f(c.programsS, 1)}, ` +
    `other ${f(c.otherS, 1)}; busy ${f(busy, 1)} of ${f(c.capacityS, 1)}${perRecord}`
  );
}

function summarize(results: StageResult[], copy: Record<string, number>, scale: number): void {
  const by = (stage: string) => results.find((r) => r.stage === stage);
  const normalize = by("normalize");
  const dedup = by("dedup");
  const lines = [`targets (issue 19), measured at S = ${scale}:`];
  if (normalize) {
    const ratio = normalize.cpuS / copy.cpuS!;
    lines.push(
      `  normalize / streaming copy   ${f(ratio, 2)}x CPU (${f(normalize.cpuS, 2)} vs ${f(copy.cpuS!, 2)} s)   target <= 1.5x   ${verdict(ratio <= 1.5)}`,
    );
  }
  if (dedup) {
    const docsPerCpuS = (dedup.manifest?.counts.in ?? 0) / dedup.cpuS;
    lines.push(
      `  dedup documents per CPU s    ${f(docsPerCpuS)}   target >= 10,000   ${verdict(docsPerCpuS >= 10_000)}`,
    );
  }
  for (const r of results) {
    lines.push(
      `  ${r.stage.padEnd(9)} peak RSS ${f(r.run.peakRssMiB).padStart(5)} MiB   target <= 2 GiB   ${verdict(r.run.peakRssMiB <= 2 * GIB)}`,
    );
  }
  for (const r of results.filter((x) => x.ideal.overhead !== undefined)) {
    lines.push(
      `  ${r.stage.padEnd(9)} own overhead ${pct(r.ideal.overhead!)} of its ${r.ideal.bound}-bound ideal (${f(r.ideal.idealS, 1)} s; LLM ${f(r.ideal.llmS, 1)}, sandbox ${f(r.ideal.sandboxS, 1)}, chain ${f(r.ideal.chainS, 1)})   target <= 10%   ${verdict(r.ideal.overhead! <= 0.1)}`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

/**
 * The whole job again in a fresh data directory (cold LLM cache), each record-wise stage as
 * `launch <stage> --only --executor local --shards N`, each global one as before; each record-wise
 * command's wall time against the same command's with one process (start-up included in both).
 */
async function compareShards(
  results: StageResult[],
  shards: number,
  o: {
    /** sandbox workers each shard runs itself (0 when they share one sandbox server) */
    workers: number;
    /** the workers of the one sandbox server the shards share (0: none) */
    serverWorkers: number;
    dir: string;
    config: string;
    /** the one-process run's config */
    single: string;
    env: Record<string, string>;
    log: string;
    usageFile: string;
    stages: string[];
  },
): Promise<void> {
  process.stdout.write(
    `\nthe job again, fresh data dir, record-wise stages as \`launch --executor local --shards ${shards}\`:\n`,
  );
  // a shard is one process (and its sandbox workers): fewer cores than that, and the ratio of the
  // stages that use CPU or the sandbox measures this machine's cores, not the pipeline
  const wanted = shards * (1 + o.workers);
  if (cpus().length < wanted) {
    process.stdout.write(
      `  note: ${shards} shards want ${wanted} cores to run side by side (a core each${o.workers ? `, plus ${o.workers} sandbox workers each` : ""}), this machine has ${cpus().length}: ` +
        "the CPU- and sandbox-bound stages' ratios are bounded by the cores here; the LLM-bound ones are not\n",
    );
  }
  if (o.serverWorkers) {
    process.stdout.write(
      `  note: the shards share one sandbox server of ${o.serverWorkers} workers, as the one process did: the sandbox-bound stages cannot run faster than it\n`,
    );
  }
  let one = 0;
  let many = 0;
  for (const stage of o.stages) {
    const sharded = RECORD_WISE.includes(stage);
    const args = sharded
      ? ["launch", stage, "--only", "--executor", "local", "--shards", String(shards), "--config", o.config]
      : ["run", stage, "--only", "--config", o.config];
    const run = await pipelineCommand(args, o);
    if (run.code !== 0) throw new Error(`${args[0]} ${stage} exited with ${run.code}:\n${tail(o.log)}`);
    if (!sharded) continue;
    const single = results.find((r) => r.stage === stage)!;
    one += single.run.wallS;
    many += run.wallS;
    process.stdout.write(
      `  ${stage.padEnd(9)} ${f(run.wallS, 1).padStart(7)} s vs ${f(single.run.wallS, 1)} s in one process: ${f(single.run.wallS / run.wallS, 2)}x   ` +
        `peak RSS of any process ${f(run.peakRssMiB)} MiB, CPU ${f(run.cpuS, 1)} s in ${run.processes.length} processes\n`,
    );
  }
  const speedUp = one / many;
  process.stdout.write(
    `  record-wise stages together: ${f(one, 1)} s -> ${f(many, 1)} s, ${f(speedUp, 2)}x one shard   target >= 3.2x with 4 shards (here ${shards})   ${verdict(speedUp >= 3.2)}\n`,
  );
  process.stdout.write("the two runs' outputs, stage by stage (status --json):\n");
  const before = stageStates(o.single, o.env);
  const after = stageStates(o.config, o.env);
  for (const stage of o.stages) {
    const a = before.get(stage);
    const b = after.get(stage);
    const counts = (x: typeof a) => `${x?.counts.out} out, ${x?.counts.rejected} rejected`;
    const verdict =
      a?.outputHash !== undefined && a.outputHash === b?.outputHash
        ? "identical outputs"
        : JSON.stringify(a?.counts) === JSON.stringify(b?.counts)
          ? `same counts, other contents (${counts(a)})`
          : `DIFFERENT: ${counts(a)} in one process, ${counts(b)} sharded`;
    process.stdout.write(`  ${stage.padEnd(9)} ${verdict}\n`);
  }
}

/** `pipeline status --json` for a config: each stage's counts and output hash (sharded or not). */
function stageStates(
  config: string,
  env: Record<string, string>,
): Map<string, { counts: Manifest["counts"]; outputHash?: string }> {
  const child = spawnSync(process.execPath, pipelineArgs(["status", "--json", "--config", config]), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  if (child.status !== 0) throw new Error(`status --json exited with ${child.status}: ${child.stderr}`);
  const rows = JSON.parse(child.stdout) as {
    stage: string;
    counts: Manifest["counts"];
    outputHash?: string;
  }[];
  return new Map(rows.map((r) => [r.stage, r]));
}

await main();
