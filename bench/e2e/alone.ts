// One sandbox stage rerun alone (`--force`, its LLM cache and kept program results removed) on the
// data of a kept e2e run, with its servers started as `bench e2e --sandbox-server` starts them: one
// JSON line of CPU per record (stage, LLM server, sandbox server, sandboxes) and time against its
// ideal (the sandbox alone, measured just before and after). Makes the data first without `--dir`.
//   pnpm bench e2e-alone [-- --dir DIR] [--stage simulate] [--workers 2] [--perf DIR (perf record -g)]
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { Manifest } from "../../pipeline/store/manifest.js";
import { textArg } from "../args.js";
import { REPO_ROOT } from "../node.js";
import { pipelineCommand } from "./child.js";
import { CpuGroup, CpuMeter } from "./cpu.js";
import { idealOf } from "./ideal.js";
import { startSandboxServer, startServers } from "./servers-process.js";

const stage = textArg("stage") ?? "simulate";
const workers = Number(textArg("workers") ?? 2);
const perfDir = textArg("perf");
const given = textArg("dir");
const dir = path.resolve(given ?? mkdtempSync(path.join(tmpdir(), "bench-e2e-alone-")));
const dataDir = path.join(dir, "data");
const f = (x: number, digits = 2) => x.toFixed(digits);
const load = () =>
  loadavg()
    .map((l) => f(l, 1))
    .join(" ");

/** a bench/e2e script as its own process, with this process's Node flags */
function benchScript(script: string, args: string[], stdout: "pipe" | "inherit"): string {
  const child = spawnSync(process.execPath, [...process.execArgv, path.join(REPO_ROOT, script), ...args], {
    encoding: "utf8",
    stdio: ["ignore", stdout, "inherit"],
  });
  if (child.status !== 0) throw new Error(`${script} ${args.join(" ")} exited with ${child.status}`);
  return child.stdout ?? "";
}

const sandboxAlone = (): number =>
  JSON.parse(
    benchScript("bench/e2e/baselines.ts", ["sandbox", "--workers", String(workers), "--runs", "300"], "pipe")
      .trim()
      .split("\n")
      .pop()!,
  ).perSecond;

/** `perf record -g` of a process until the stage ends (needs perf and the right to trace it) */
const perfs: ChildProcess[] = [];
function profile(pid: number | undefined, name: string): void {
  if (!perfDir || pid === undefined) return;
  const out = path.join(perfDir, `${name}.data`);
  perfs.push(spawn("perf", ["record", "-F", "499", "-g", "-o", out, "-p", String(pid)], { stdio: "ignore" }));
}

if (!given) {
  benchScript(
    "bench/e2e/e2e.ts",
    ["--scale", "0.01", "--sandbox-server", "--until", stage, "--keep", "--dir", dir],
    "inherit",
  );
}
// JS frames in the profiles: V8 writes /tmp/perf-PID.map
if (perfDir) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --perf-basic-prof`.trim();
const servers = await startServers(path.join(dir, "hub"), 500);
const group = CpuGroup.create("sandbox-server-alone");
const sandboxServer = await startSandboxServer(dir, workers, group);
try {
  // the kept run's config with these servers, on the data under `--dir` (a copy of a kept run works)
  const config = path.join(dir, "config-alone.yaml");
  writeFileSync(
    config,
    readFileSync(path.join(dir, "config.yaml"), "utf8")
      .replace(/^data_dir: .*$/m, `data_dir: ${dataDir}`)
      .replace(/^( {2}endpoint: ).*$/m, `$1${servers.hub}`)
      .replace(/^( {2}url: ).*$/m, `$1${sandboxServer.url}`),
  );
  const env = { OPENAI_BASE_URL: servers.llm, OPENAI_API_KEY: "bench-e2e" };
  const log = path.join(dir, "alone.log");
  const usageFile = path.join(dir, "usage-alone.jsonl");
  for (const file of ["llm-cache.sqlite", "llm-cache.sqlite-wal", "llm-cache.sqlite-shm"])
    rmSync(path.join(dataDir, file), { force: true });
  // kept program results: simulate's and correct's execution journal, leetcode's verdicts
  rmSync(path.join(dataDir, stage, "work", "executions"), { recursive: true, force: true });
  rmSync(path.join(dataDir, stage, "work", "verdicts"), { recursive: true, force: true });

  const rateBefore = sandboxAlone();
  const loadBefore = load();
  const meter = new CpuMeter({ llm: servers.pid, sandboxServer: sandboxServer.pid }, group);
  const before = meter.probe();
  profile(sandboxServer.pid, "sandbox-server");
  const args = ["run", stage, "--only", "--config", config];
  const run = await pipelineCommand([...args, "--force"], {
    env,
    log,
    usageFile,
    started: (pid) => profile(pid, "stage"),
  });
  const cpu = meter.shares(before, meter.probe(), run.cpuS);
  for (const perf of perfs) perf.kill("SIGINT");
  const loadAfter = load();
  if (run.code !== 0) throw new Error(`${stage} exited with ${run.code}; see ${log}`);
  // the stage now complete: starting Node, loading the code, checking the manifests
  const noop = await pipelineCommand(args, { env, log, usageFile });
  const rateAfter = sandboxAlone();

  const manifest = JSON.parse(readFileSync(path.join(dataDir, stage, "manifest.json"), "utf8")) as Manifest;
  const records = manifest.counts.in;
  const wallS = (manifest.elapsedMs ?? 0) / 1000;
  const ideal = idealOf({
    stage,
    wallS,
    requests: manifest.usage?.requests ?? 0,
    latencyS: 0.5,
    llmConcurrency: 128,
    sandbox: manifest.sandbox,
    sandboxRate: Math.max(rateBefore, rateAfter),
    workers,
  });
  const perRecord = (s: number) => f((1000 * s) / records);
  process.stdout.write(
    `${JSON.stringify({
      stage,
      records,
      requests: manifest.usage?.requests ?? 0,
      programs: manifest.sandbox?.runs ?? 0,
      load: { before: loadBefore, after: loadAfter },
      sandboxAlone: [f(rateBefore, 1), f(rateAfter, 1)],
      wallS: f(wallS, 1),
      idealS: f(ideal.idealS, 1),
      overhead: `${f(100 * (ideal.overhead ?? 0), 1)}%`,
      cpuS: {
        stage: f(run.cpuS),
        startup: f(noop.cpuS),
        llmServer: f(cpu.llmServerS),
        sandboxServer: f(cpu.sandboxServerS),
        sandboxes: f(cpu.programsS ?? 0),
        other: f(cpu.otherS),
        capacity: f(cpu.capacityS, 1),
      },
      perRecordMs: {
        stage: perRecord(run.cpuS - noop.cpuS),
        llmServer: perRecord(cpu.llmServerS),
        sandboxServer: perRecord(cpu.sandboxServerS),
        sandboxes: perRecord(cpu.programsS ?? 0),
      },
    })}\n`,
  );
} finally {
  for (const perf of perfs) perf.kill("SIGINT");
  servers.stop();
  await sandboxServer.stop();
  await group?.remove();
  if (!given) rmSync(dir, { recursive: true, force: true });
}
