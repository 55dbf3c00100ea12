// Sandbox benchmark: bare toolchain runs of the same programs (spawned on the host in a fresh temp
// dir) against sandboxed runs through the embedded CodeRunner, interleaved in one process, as ratios.
// Every sandboxed run gets fresh run dirs and sandboxes; the one-at-a-time figures let the next
// sandbox finish building first, the back-to-back ones do not.
//   pnpm exec tsx bench/sandbox/run.ts [--hello N] [--rounds N]
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { PRIVATE_GO_CACHE } from "../../pipeline/sandbox/go-cache.js";
import { EmbeddedSandbox, findLanguage, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { toolchainPaths } from "../../pipeline/sandbox/toolchains.js";
import { median } from "../median.js";
import { type BenchProgram, HUMANEVAL_PROGRAMS, PYTHON_HELLO } from "./programs.js";

const { values } = parseArgs({
  options: { hello: { type: "string", default: "150" }, rounds: { type: "string", default: "4" } },
});
const HELLO_RUNS = Number(values.hello);
const ROUNDS = Number(values.rounds);

function spawnWait(argv: string[], cwd: string, env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    // detached (a new session) like the sandbox's commands: with scheduler autogroups a new session
    // gets its own CPU share, which would otherwise favour the sandbox on a busy machine
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
}

/** The same compile and run commands the sandbox uses, straight on the host in a fresh temp dir. */
async function runBare(program: BenchProgram): Promise<void> {
  const spec = findLanguage(program.language)!;
  // tmpfs, like the sandbox's work dirs, so neither side gets faster disk
  const dir = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bench-bare-"));
  try {
    const source = spec.sourceFile(program.code);
    await writeFile(join(dir, source), program.code);
    const env: Record<string, string> = { PATH: "/usr/bin:/bin", HOME: dir, TMPDIR: dir, LANG: "C.UTF-8" };
    const ctx = {
      source,
      code: program.code,
      memoryMb: 1024,
      ...toolchainPaths().host,
      goCache: PRIVATE_GO_CACHE,
    };
    const specEnv = typeof spec.env === "function" ? spec.env(ctx) : (spec.env ?? {});
    for (const [key, value] of Object.entries(specEnv)) env[key] = value.replace(/^\/tmp/, dir);
    if (spec.compile && (await spawnWait(spec.compile(ctx), dir, env)) !== 0)
      throw new Error(`bare compile failed: ${program.language}`);
    const code = await spawnWait(spec.run(ctx), dir, env);
    if (code !== 0) throw new Error(`bare run failed: ${program.language}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function runSandboxed(sandbox: EmbeddedSandbox, program: BenchProgram): Promise<void> {
  const response = await sandbox.run({ ...program, compile_timeout: 60, run_timeout: 30 });
  if (response.status !== "Success")
    throw new Error(`sandboxed run failed: ${JSON.stringify(response).slice(0, 600)}`);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Python hello-world one at a time, interleaved with bare runs, medians in ms. */
async function helloLatency(
  sandbox: EmbeddedSandbox,
  runs: number,
): Promise<{ bare: number; sandboxed: number }> {
  const bare: number[] = [];
  const sandboxed: number[] = [];
  for (let i = 0; i < runs; i++) {
    // the next sandbox is built in the background: never let that overlap a timed run
    await sandbox.settled();
    bare.push(await timed(() => runBare(PYTHON_HELLO)));
    await sandbox.settled();
    sandboxed.push(await timed(() => runSandboxed(sandbox, PYTHON_HELLO)));
  }
  // medians: on a shared machine a few runs land behind someone else's burst
  return { bare: median(bare), sandboxed: median(sandboxed) };
}

/** Python hello-world back to back in blocks, background work included, mean ms per run. */
async function helloStream(
  sandbox: EmbeddedSandbox,
  runs: number,
): Promise<{ bare: number; sandboxed: number }> {
  const block = 10;
  let bare = 0;
  let sandboxed = 0;
  for (let done = 0; done < runs; done += block) {
    bare += await timed(async () => {
      for (let i = 0; i < block; i++) await runBare(PYTHON_HELLO);
    });
    sandboxed += await timed(async () => {
      for (let i = 0; i < block; i++) await runSandboxed(sandbox, PYTHON_HELLO);
    });
    // what the last sandboxed run left building belongs to the sandboxed block
    sandboxed += await timed(() => sandbox.settled());
  }
  const count = Math.ceil(runs / block) * block;
  return { bare: bare / count, sandboxed: sandboxed / count };
}

async function main(): Promise<void> {
  const workers = availableParallelism();
  const config = sandboxConfigSchema.parse({ workers });
  const sandbox = new EmbeddedSandbox(config);
  const perStep = new EmbeddedSandbox(config, { prepare: false });
  const isolation = await sandbox.isolation();
  if (!isolation.mode) throw new Error(`no isolation here: ${isolation.problem}`);
  console.log(
    `sandbox benchmark: isolation ${isolation.mode}, cgroup ${isolation.cgroup ?? "none"}, sandboxes built ahead: ${isolation.prepared}, ${workers} workers, node ${process.version}`,
  );

  // warm page caches and the probe so neither side pays first-run costs
  for (const program of [PYTHON_HELLO, ...HUMANEVAL_PROGRAMS]) {
    await runBare(program);
    await runSandboxed(sandbox, program);
  }
  await runSandboxed(perStep, PYTHON_HELLO);

  // 1. python hello-world: the per-run cost of isolation
  const latency = await helloLatency(sandbox, HELLO_RUNS);
  const latencyPerStep = await helloLatency(perStep, Math.ceil(HELLO_RUNS / 2));
  await perStep.close();
  const stream = await helloStream(sandbox, HELLO_RUNS);

  // 2. HumanEval-style programs with their tests, all workers busy, compile steps counted
  const limit = pLimit(workers);
  const perLanguage = new Map<string, { bare: number; sandbox: number }>();
  let bareTotal = 0;
  let sandboxTotal = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const batch = (runner: (p: BenchProgram) => Promise<void>, key: "bare" | "sandbox") =>
      Promise.all(
        HUMANEVAL_PROGRAMS.map((program) =>
          limit(async () => {
            const ms = await timed(() => runner(program));
            const entry = perLanguage.get(program.language) ?? { bare: 0, sandbox: 0 };
            entry[key] += ms;
            perLanguage.set(program.language, entry);
          }),
        ),
      );
    // the sandboxes built ahead during a batch are its cost, and must not spill into a bare batch
    const sandboxBatch = async () => {
      await batch((p) => runSandboxed(sandbox, p), "sandbox");
      await sandbox.settled();
    };
    // alternate which side goes first so drift in machine load does not favour one
    if (round % 2 === 0) {
      bareTotal += await timed(() => batch(runBare, "bare"));
      sandboxTotal += await timed(sandboxBatch);
    } else {
      sandboxTotal += await timed(sandboxBatch);
      bareTotal += await timed(() => batch(runBare, "bare"));
    }
  }
  await sandbox.close();

  const ratio = (bare: number, isolated: number) => (bare / isolated).toFixed(2);
  const row = (label: string, bare: number, isolated: number) =>
    console.log(
      `| ${label} | ${bare.toFixed(1)} ms/run | ${isolated.toFixed(1)} ms/run | ${ratio(bare, isolated)}x | ${(isolated - bare).toFixed(1)} ms |`,
    );
  console.log("\n| workload | bare | sandboxed | ratio (bare/sandboxed) | isolation overhead per run |");
  console.log("|---|---|---|---|---|");
  row(`python hello-world, ${HELLO_RUNS} runs one at a time (median)`, latency.bare, latency.sandboxed);
  row(
    `python hello-world, ${HELLO_RUNS} runs back to back (mean, background work counted)`,
    stream.bare,
    stream.sandboxed,
  );
  row(
    `python hello-world, ${Math.ceil(HELLO_RUNS / 2)} runs one at a time, each sandbox built when its step starts (median)`,
    latencyPerStep.bare,
    latencyPerStep.sandboxed,
  );
  const programsRun = HUMANEVAL_PROGRAMS.length * ROUNDS;
  console.log(
    `| HumanEval-style, ${HUMANEVAL_PROGRAMS.length} languages x ${ROUNDS} rounds, ${workers} at a time | ${(bareTotal / 1000).toFixed(2)} s (${((programsRun * 1000) / bareTotal).toFixed(2)} programs/s) | ${(sandboxTotal / 1000).toFixed(2)} s (${((programsRun * 1000) / sandboxTotal).toFixed(2)} programs/s) | ${ratio(bareTotal, sandboxTotal)}x | - |`,
  );
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} (${availableParallelism()} cores)`,
  );
  console.log("\nper language (summed over rounds, compile + run, ms):");
  for (const [language, entry] of perLanguage) {
    console.log(
      `  ${language.padEnd(11)} bare ${entry.bare.toFixed(0).padStart(6)}  sandboxed ${entry.sandbox.toFixed(0).padStart(6)}  ratio ${ratio(entry.bare, entry.sandbox)}x`,
    );
  }
}

await main();
