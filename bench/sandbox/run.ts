// Sandbox benchmark: every figure is a ratio of bare toolchain runs of the same programs (spawned
// directly on the host in a fresh temp dir) to sandboxed runs through the embedded CodeRunner, measured
// interleaved in one process so machine load hits both alike. Each sandboxed run gets fresh run dirs
// and fresh bwrap sandboxes; nothing is reused between runs.
//
//   pnpm exec tsx bench/sandbox/run.ts [--hello N] [--rounds N]
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { EmbeddedSandbox, findLanguage, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { toolchainPaths } from "../../pipeline/sandbox/toolchains.js";
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
    for (const [key, value] of Object.entries(spec.env ?? {})) env[key] = value.replace(/^\/tmp/, dir);
    const ctx = { source, code: program.code, memoryMb: 1024, ...toolchainPaths().host };
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const workers = availableParallelism();
  const sandbox = new EmbeddedSandbox(sandboxConfigSchema.parse({ workers }));
  const isolation = await sandbox.isolation();
  if (!isolation.mode) throw new Error(`no isolation here: ${isolation.problem}`);
  console.log(`sandbox benchmark: isolation ${isolation.mode}, ${workers} workers, node ${process.version}`);

  // warm page caches and the probe so neither side pays first-run costs
  for (const program of [PYTHON_HELLO, ...HUMANEVAL_PROGRAMS]) {
    await runBare(program);
    await runSandboxed(sandbox, program);
  }

  // 1. python hello-world, one at a time: the per-run cost of isolation
  const bareHello: number[] = [];
  const sandboxHello: number[] = [];
  for (let i = 0; i < HELLO_RUNS; i++) {
    bareHello.push(await timed(() => runBare(PYTHON_HELLO)));
    sandboxHello.push(await timed(() => runSandboxed(sandbox, PYTHON_HELLO)));
  }
  // medians: on a shared machine a few runs land behind someone else's burst
  const helloBareMs = median(bareHello);
  const helloSandboxMs = median(sandboxHello);
  const helloBareMean = mean(bareHello);
  const helloSandboxMean = mean(sandboxHello);

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
    // alternate which side goes first so drift in machine load does not favour one
    if (round % 2 === 0) {
      bareTotal += await timed(() => batch(runBare, "bare"));
      sandboxTotal += await timed(() => batch((p) => runSandboxed(sandbox, p), "sandbox"));
    } else {
      sandboxTotal += await timed(() => batch((p) => runSandboxed(sandbox, p), "sandbox"));
      bareTotal += await timed(() => batch(runBare, "bare"));
    }
  }
  await sandbox.close();

  const ratio = (bare: number, isolated: number) => (bare / isolated).toFixed(2);
  console.log("\n| workload | bare | sandboxed | ratio (bare/sandboxed) |");
  console.log("|---|---|---|---|");
  console.log(
    `| python hello-world, ${HELLO_RUNS} runs one at a time (median) | ${helloBareMs.toFixed(1)} ms/run | ${helloSandboxMs.toFixed(1)} ms/run | ${ratio(helloBareMs, helloSandboxMs)}x |`,
  );
  console.log(
    `| python hello-world, ${HELLO_RUNS} runs one at a time (mean) | ${helloBareMean.toFixed(1)} ms/run | ${helloSandboxMean.toFixed(1)} ms/run | ${ratio(helloBareMean, helloSandboxMean)}x |`,
  );
  const programsRun = HUMANEVAL_PROGRAMS.length * ROUNDS;
  console.log(
    `| HumanEval-style, ${HUMANEVAL_PROGRAMS.length} languages x ${ROUNDS} rounds, ${workers} at a time | ${(bareTotal / 1000).toFixed(2)} s (${((programsRun * 1000) / bareTotal).toFixed(2)} programs/s) | ${(sandboxTotal / 1000).toFixed(2)} s (${((programsRun * 1000) / sandboxTotal).toFixed(2)} programs/s) | ${ratio(bareTotal, sandboxTotal)}x |`,
  );
  console.log(
    `\nisolation overhead per python run (median): ${(helloSandboxMs - helloBareMs).toFixed(1)} ms`,
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
