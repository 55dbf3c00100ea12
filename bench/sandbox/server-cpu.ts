// What a program costs through the sandbox server: the same Python programs, W at a time, run in
// alternating phases (a) by /usr/bin/python3 straight on the host (the bare rate), (b) by the embedded
// sandbox in this process and (c) through `pipeline sandbox serve`, started as users start it, by the
// client a stage uses; per program the caller's, the server's and the sandboxes' CPU (a cpuacct cgroup,
// bench/e2e/cpu.ts; needs root and cgroup v1, else "-"). Then a concurrency sweep (sweep.ts).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { runBlock } from "../../pipeline/execution/index.js";
import {
  type CodeRunner,
  defaultWorkers,
  EmbeddedSandbox,
  HttpSandboxClient,
  sandboxConfigSchema,
} from "../../pipeline/sandbox/index.js";
import { numberArg, textArg } from "../args.js";
import { CpuGroup, processCpuS, spawnersOf } from "../e2e/cpu.js";
import { startSandboxServer } from "../e2e/servers-process.js";
import { keepSandboxBusy, sumProgram } from "./busy.js";
import { sweepLevel } from "./sweep.js";

const RUNS = numberArg("runs", 400);
const ROUNDS = numberArg("rounds", 3);
const WORKERS = numberArg("workers", defaultWorkers());
const SWEEP = (textArg("sweep") ?? "1,10,50,100")
  .split(",")
  .map(Number)
  .filter((n) => n > 0);

interface Phase {
  seconds: number;
  /** CPU ms per program: the caller, the server process itself, the sandboxes it started */
  caller: number;
  server: number;
  sandboxes: number | undefined;
}

/** The program the sandbox phases run, by /usr/bin/python3 in a fresh tmpfs dir of its own. */
async function runBare(n: number): Promise<void> {
  const dir = await mkdtemp(path.join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bench-bare-"));
  try {
    await writeFile(path.join(dir, "main.py"), sumProgram(n));
    const code = await new Promise<number | null>((resolve, reject) => {
      // a new session, as the sandbox's commands get (autogroups would favour one side otherwise)
      const child = spawn("/usr/bin/python3", ["-u", "main.py"], {
        cwd: dir,
        env: { PATH: "/usr/bin:/bin", HOME: dir, TMPDIR: dir, LANG: "C.UTF-8" },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      child.stdout.resume();
      child.stderr.resume();
      child.on("error", reject);
      child.on("close", resolve);
    });
    if (code !== 0) throw new Error(`a bare benchmark program failed with exit code ${code}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The bare phase: RUNS programs, WORKERS at a time (the sandbox runs W at once too). */
async function keepBareBusy(): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < RUNS) await runBare(next++ % 97);
    }),
  );
}

/** One phase: the caller's CPU, the server's, and what the groups saw, per program. */
async function phase(
  runner: CodeRunner | "bare",
  self: CpuGroup | undefined,
  server: { pid: number | undefined; group: CpuGroup | undefined } | undefined,
): Promise<Phase> {
  const cpu = process.cpuUsage();
  const serverBefore = processCpuS(server?.pid);
  const selfBefore = self?.usageS() ?? 0;
  const serverGroupBefore = server?.group?.usageS() ?? 0;
  const started = performance.now();
  await (runner === "bare" ? keepBareBusy() : keepSandboxBusy(runner, RUNS, WORKERS));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const callerS = (used.user + used.system) / 1e6;
  const serverS = processCpuS(server?.pid) - serverBefore;
  // the group holds the process that started the sandboxes: its own CPU is taken off
  const sandboxesS = server
    ? server.group && server.group.usageS() - serverGroupBefore - serverS
    : self && self.usageS() - selfBefore - callerS;
  const ms = (s: number) => (1000 * s) / RUNS;
  return {
    seconds,
    caller: ms(callerS),
    server: ms(serverS),
    sandboxes: sandboxesS === undefined ? undefined : ms(sandboxesS),
  };
}

const f = (x: number | undefined, digits = 2) => (x === undefined ? "-" : x.toFixed(digits));
const total = (p: Phase) => p.caller + p.server + (p.sandboxes ?? 0);
const describe = (name: string, p: Phase) =>
  `${name.padEnd(9)} ${f(RUNS / p.seconds, 1).padStart(6)} programs/s   CPU ms a program: caller ${f(p.caller)}, server ${f(p.server)}, sandboxes ${f(p.sandboxes)}; all ${f(total(p))}`;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-sandbox-server-"));
  const self = CpuGroup.create("caller");
  self?.add(process.pid);
  const serverGroup = CpuGroup.create("server");
  const server = await startSandboxServer(dir, WORKERS, serverGroup);
  const config = (extra: object) => sandboxConfigSchema.parse({ workers: WORKERS, queue: 100_000, ...extra });
  const embedded = new EmbeddedSandbox(config({}));
  // as a stage's client is configured: no workers of its own, so the server's queue is never empty
  const client = new HttpSandboxClient(config({ url: server.url, workers: undefined }));
  process.stdout.write(
    `sandbox-server: ${RUNS} Python programs a phase, ${WORKERS} workers, ${ROUNDS} rounds; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}\n`,
  );
  const results: { bare: Phase[]; embedded: Phase[]; server: Phase[] } = {
    bare: [],
    embedded: [],
    server: [],
  };
  try {
    // warm both: the server's and the embedded sandbox's one-off set-up, the JIT
    await Promise.all([runBlock(embedded, "print(1)", "python"), runBlock(client, "print(1)", "python")]);
    for (let round = 0; round < ROUNDS; round++) {
      const order =
        round % 2 === 0
          ? (["bare", "embedded", "server"] as const)
          : (["server", "embedded", "bare"] as const);
      for (const which of order) {
        const p =
          which === "server"
            ? await phase(client, self, { pid: server.pid, group: serverGroup })
            : await phase(which === "bare" ? "bare" : embedded, self, undefined);
        results[which].push(p);
        process.stdout.write(`  round ${round + 1} ${describe(which, p)}\n`);
      }
    }
    if (SWEEP.length > 0) {
      process.stdout.write(
        `concurrency sweep: /run_code requests of ${"python (HumanEval-style and hello), nodejs, typescript, cpp, go, rust, java, bash"} from a plain HTTP client, no retries\n`,
      );
      for (const parallel of SWEEP) {
        const level = await sweepLevel(server.url, parallel, Math.max(40, 2 * parallel));
        const errors = [...level.errors].map(([what, n]) => `${n} x ${what}`).join("; ");
        process.stdout.write(
          `  ${String(parallel).padStart(3)} parallel: ${level.requests} requests, ${f(level.requests / level.seconds, 1)} programs/s, p50 ${f(level.p50Ms / 1000)} s, p99 ${f(level.p99Ms / 1000)} s, errors ${level.errors.size === 0 ? 0 : errors}\n`,
        );
      }
    }
  } finally {
    await client.close();
    await embedded.close();
    await server.stop();
    // the embedded sandbox's spawner may outlive its close by a moment: out with it too
    for (const pid of [process.pid, ...spawnersOf(process.pid)]) self?.leave(pid);
    await self?.remove();
    await serverGroup?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (ps: Phase[], pick: (p: Phase) => number) => ps.reduce((s, p) => s + pick(p), 0) / ps.length;
  const e = results.embedded;
  const s = results.server;
  const rate = (ps: Phase[]) => mean(ps, (p) => RUNS / p.seconds);
  const outside = (p: Phase) => p.caller + p.server;
  process.stdout.write(
    `CPU a program outside the sandboxes: server path (client ${f(mean(s, (p) => p.caller))} + server ${f(mean(s, (p) => p.server))}) ${f(mean(s, outside))} ms vs embedded ${f(mean(e, outside))} ms: ${f(mean(s, outside) / mean(e, outside))}x\n` +
      `CPU a program in all: ${f(mean(s, total))} vs ${f(mean(e, total))} ms: ${f(mean(s, total) / mean(e, total))}x; programs/s ${f(
        mean(s, (p) => RUNS / p.seconds),
        1,
      )} vs ${f(
        mean(e, (p) => RUNS / p.seconds),
        1,
      )}\n` +
      `programs/s through the server against bare /usr/bin/python3, ${WORKERS} at a time: ${f(rate(s), 1)} vs ${f(rate(results.bare), 1)}: ${f(rate(s) / rate(results.bare))}x (target >= 0.80x); embedded ${f(rate(e) / rate(results.bare))}x\n`,
  );
}

await main();
