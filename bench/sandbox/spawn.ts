// What starting one host command costs its starter in CPU: Node's own spawn (a fork of this process,
// dearer as its heap grows) against our spawner process (pipeline/sandbox/spawner.c, CPU counted as
// ours): /bin/true through HostProcess, `--concurrency` at a time, at several heap sizes (a sandbox
// server holds ~70-100 MiB, a stage with the embedded sandbox more); phases alternate.
//   pnpm bench spawn [-- --spawns 400] [--rounds 3] [--concurrency 4] [--heaps 0,100,250]
import { runHostCommand } from "../../pipeline/sandbox/command.js";
import type { HostCommand } from "../../pipeline/sandbox/isolation.js";
import { helperBinary } from "../../pipeline/sandbox/launcher.js";
import { numberArg, textArg } from "../args.js";
import { processCpuS } from "../e2e/cpu.js";
import { median } from "../median.js";

const SPAWNS = numberArg("spawns", 400);
const ROUNDS = numberArg("rounds", 3);
const CONCURRENCY = numberArg("concurrency", 4);
const HEAPS = (textArg("heaps") ?? "0,100,250").split(",").map(Number);

const spawner = await helperBinary("spawn");
if (!spawner) throw new Error("the spawner could not be built here (gcc missing?)");

/** CPU ms a command costs us (and our spawner), wall ms, over SPAWNS commands. */
async function phase(through: string | null): Promise<{ cpuMs: number; wallMs: number }> {
  const host: HostCommand = { file: "/bin/true", args: [], env: { PATH: "/usr/bin:/bin" }, cwd: "/" };
  if (through) host.spawner = through;
  const options = { stdin: null, timeoutSeconds: 10, maxOutputBytes: 1024, killOutputBytes: 4096 };
  const cpuBefore = processCpuS(process.pid);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < SPAWNS) {
        const { result } = await runHostCommand(host, options);
        if (result.return_code !== 0) throw new Error(`/bin/true: ${JSON.stringify(result)}`);
      }
    }),
  );
  return {
    cpuMs: (1000 * (processCpuS(process.pid) - cpuBefore)) / SPAWNS,
    wallMs: (performance.now() - started) / SPAWNS,
  };
}

const padding: Buffer[] = [];
const rssMiB = () => Math.round(process.memoryUsage().rss / 2 ** 20);
console.log(
  `${SPAWNS} commands a phase, ${CONCURRENCY} at a time, ${ROUNDS} rounds; CPU of this process (and its spawner) a command`,
);
console.log("heap padding | RSS     | Node's spawn       | our spawner        | ratio (Node / spawner)");
const rows = [];
for (const heapMiB of HEAPS) {
  // touched pages, as a live heap's are: a fork copies the page tables of what is mapped and used
  while (padding.length < heapMiB) padding.push(Buffer.alloc(2 ** 20, padding.length & 0xff));
  await phase(spawner); // warm-up: the spawner started, the code paths compiled
  const node: number[] = [];
  const ours: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    node.push((await phase(null)).cpuMs);
    ours.push((await phase(spawner)).cpuMs);
  }
  const row = { heapMiB, rssMiB: rssMiB(), nodeMs: median(node), spawnerMs: median(ours) };
  rows.push(row);
  console.log(
    `${String(heapMiB).padStart(8)} MiB | ${String(row.rssMiB).padStart(3)} MiB | ${row.nodeMs.toFixed(3)} ms CPU      | ` +
      `${row.spawnerMs.toFixed(3)} ms CPU      | ${(row.nodeMs / row.spawnerMs).toFixed(2)}x`,
  );
}
console.log(JSON.stringify({ spawns: SPAWNS, concurrency: CONCURRENCY, rows }));
