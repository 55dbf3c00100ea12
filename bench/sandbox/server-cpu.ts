// What a program costs in CPU besides itself, through the sandbox server against the embedded
// sandbox: the same Python programs, W workers kept busy, run in turn (a) by the embedded sandbox in
// this process (the baseline: what bench e2e's sandbox-alone rate includes) and (b) through
// `pipeline sandbox serve`, started as users start it, by the client a stage uses (HttpSandboxClient
// through pipeline/execution). Per program: the calling process's CPU, the server process's own, and
// the sandboxes' (bwrap, the launcher, the toolchain, the program), which stay in a cpuacct cgroup
// with the process that started them (bench/e2e/cpu.ts; needs root and cgroup v1, else "-"). The
// phases alternate, so load from elsewhere hits both alike.
//
//   pnpm bench sandbox-server [-- --runs 400] [--rounds 3] [--workers W]
import { mkdtempSync, rmSync } from "node:fs";
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
import { numberArg } from "../args.js";
import { CpuGroup, processCpuS } from "../e2e/cpu.js";
import { startSandboxServer } from "../e2e/servers-process.js";
import { keepSandboxBusy } from "./busy.js";

const RUNS = numberArg("runs", 400);
const ROUNDS = numberArg("rounds", 3);
const WORKERS = numberArg("workers", defaultWorkers());

interface Phase {
  seconds: number;
  /** CPU ms per program: the caller, the server process itself, the sandboxes it started */
  caller: number;
  server: number;
  sandboxes: number | undefined;
}

/** One phase: the caller's CPU, the server's, and what the groups saw, per program. */
async function phase(
  runner: CodeRunner,
  self: CpuGroup | undefined,
  server: { pid: number | undefined; group: CpuGroup | undefined } | undefined,
): Promise<Phase> {
  const cpu = process.cpuUsage();
  const serverBefore = processCpuS(server?.pid);
  const selfBefore = self?.usageS() ?? 0;
  const serverGroupBefore = server?.group?.usageS() ?? 0;
  const started = performance.now();
  await keepSandboxBusy(runner, RUNS, WORKERS);
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
  const client = new HttpSandboxClient(config({ url: server.url }));
  process.stdout.write(
    `sandbox-server: ${RUNS} Python programs a phase, ${WORKERS} workers, ${ROUNDS} rounds; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}\n`,
  );
  const results: { embedded: Phase[]; server: Phase[] } = { embedded: [], server: [] };
  try {
    // warm both: the server's and the embedded sandbox's one-off set-up, the JIT
    await Promise.all([runBlock(embedded, "print(1)", "python"), runBlock(client, "print(1)", "python")]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["embedded", "server"] as const) : (["server", "embedded"] as const);
      for (const which of order) {
        const p =
          which === "embedded"
            ? await phase(embedded, self, undefined)
            : await phase(client, self, { pid: server.pid, group: serverGroup });
        results[which].push(p);
        process.stdout.write(`  round ${round + 1} ${describe(which, p)}\n`);
      }
    }
  } finally {
    await client.close();
    await embedded.close();
    await server.stop();
    self?.leave(process.pid);
    self?.remove();
    serverGroup?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (ps: Phase[], pick: (p: Phase) => number) => ps.reduce((s, p) => s + pick(p), 0) / ps.length;
  const e = results.embedded;
  const s = results.server;
  const outside = (p: Phase) => p.caller + p.server;
  process.stdout.write(
    `CPU a program outside the sandboxes: server path (client ${f(mean(s, (p) => p.caller))} + server ${f(mean(s, (p) => p.server))}) ${f(mean(s, outside))} ms vs embedded ${f(mean(e, outside))} ms: ${f(mean(s, outside) / mean(e, outside))}x\n` +
      `CPU a program in all: ${f(mean(s, total))} vs ${f(mean(e, total))} ms: ${f(mean(s, total) / mean(e, total))}x; programs/s ${f(
        mean(s, (p) => RUNS / p.seconds),
        1,
      )} vs ${f(
        mean(e, (p) => RUNS / p.seconds),
        1,
      )}\n`,
  );
}

await main();
