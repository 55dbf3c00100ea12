// Ingest benchmark: a full-size synthetic corpus in the four real formats, then, in one run,
//   1. the floor: a raw streaming copy of the same rows (read lines, JSON.parse, JSON.stringify, write),
//   2. normalize: the real readers (JSON Lines and streamed JSON arrays) and adapters, outputs written,
//   3. dedup: decontamination + exact + MinHash-LSH near duplicates over normalize's output.
// Each phase runs in its own process so its peak RSS is its own.
//   pnpm exec tsx bench/ingest/ingest.ts [--scale 0.1] [--keep] [--dir DIR]
// Targets: normalize <= 2.0x the copy, peak RSS <= 1 GiB; dedup >= 5,000 documents/s per core.
import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { NgramIndex } from "../../pipeline/dedup/decontaminate.js";
import { seededRandom } from "../../pipeline/dedup/hash.js";
import { readRows } from "../../pipeline/readers/index.js";
import type { PipelineRecord, Reject } from "../../pipeline/record.js";
import { dedupConfigSchema, deduplicateSeeds } from "../../stages/dedup.js";
import { normalizeRow, seedId } from "../../stages/normalize.js";
import { type GeneratedSource, generateCorpus, SHAPES } from "./corpus.js";

interface PhaseResult {
  /** wall-clock seconds */
  seconds: number;
  /** user + system CPU seconds of the phase: the per-core cost, unaffected by other load on the machine */
  cpuSeconds: number;
  maxRssMiB: number;
  rows: number;
  extra?: Record<string, number>;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

async function close(stream: WriteStream): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

/** Lines of a file, split with indexOf on the raw bytes: the cheapest honest way to stream JSONL. */
async function* lines(file: string): AsyncGenerator<string> {
  let carry = "";
  for await (const chunk of createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 })) {
    const text = carry + (chunk as string);
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      if (nl > start) yield text.slice(start, nl);
      start = nl + 1;
    }
    carry = text.slice(start);
  }
  if (carry !== "") yield carry;
}

let cpuAtStart = process.cpuUsage();

function start(): number {
  cpuAtStart = process.cpuUsage();
  return performance.now();
}

function finish(started: number, rows: number, extra?: Record<string, number>): PhaseResult {
  const cpu = process.cpuUsage(cpuAtStart);
  return {
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    rows,
    ...(extra ? { extra } : {}),
  };
}

async function phaseCopy(dir: string, sources: GeneratedSource[]): Promise<PhaseResult> {
  const started = start();
  const out = createWriteStream(path.join(dir, "copy.jsonl"));
  let rows = 0;
  for (const source of sources) {
    for await (const line of lines(source.plain)) {
      await write(out, `${JSON.stringify(JSON.parse(line))}\n`);
      rows++;
    }
  }
  await close(out);
  return finish(started, rows);
}

async function phaseNormalize(dir: string, sources: GeneratedSource[]): Promise<PhaseResult> {
  const started = start();
  const out = createWriteStream(path.join(dir, "normalize.jsonl"));
  const rejects = createWriteStream(path.join(dir, "normalize.rejects.jsonl"));
  let rows = 0;
  let rejected = 0;
  for (const source of sources) {
    let n = 0;
    for await (const row of readRows(source.file, { maxRowBytes: 1_048_576 })) {
      const outcome = normalizeRow({
        id: seedId(source.shape.name, n++),
        adapter: source.shape.name,
        repo: `bench/${source.shape.name}`,
        file: path.basename(source.file),
        commit: "0".repeat(40),
        row,
      });
      for (const record of outcome.out ?? []) await write(out, `${JSON.stringify(record)}\n`);
      for (const reject of outcome.rejects ?? []) {
        await write(rejects, `${JSON.stringify(reject)}\n`);
        rejected++;
      }
      rows++;
    }
  }
  await close(out);
  await close(rejects);
  return finish(started, rows, { rejected });
}

/** HumanEval- and MBPP-sized benchmark sets of synthetic prompts (664 items). */
function syntheticBenchmarks(): NgramIndex {
  const index = new NgramIndex(10);
  const random = seededRandom(99);
  for (let i = 0; i < 664; i++) {
    const words = Array.from({ length: 40 + (random() % 120) }, () => `w${random() % 5000}`);
    index.add({ benchmark: i < 164 ? "humaneval" : "mbpp", id: String(i), text: words.join(" ") });
  }
  return index;
}

async function phaseReadFloor(dir: string): Promise<PhaseResult> {
  const started = start();
  let rows = 0;
  let chars = 0;
  for await (const line of lines(path.join(dir, "normalize.jsonl"))) {
    const record = JSON.parse(line) as { query: string };
    chars += record.query.length;
    rows++;
  }
  return finish(started, rows, { chars });
}

async function phaseDedup(dir: string): Promise<PhaseResult> {
  const config = dedupConfigSchema.parse({});
  const benchmarks = syntheticBenchmarks();
  const out = createWriteStream(path.join(dir, "dedup.jsonl"));
  const counts: Record<string, number> = {};
  async function* records(): AsyncGenerator<PipelineRecord> {
    for await (const line of lines(path.join(dir, "normalize.jsonl")))
      yield JSON.parse(line) as PipelineRecord;
  }
  let kept = 0;
  const started = start();
  await deduplicateSeeds(records(), config, benchmarks, {
    out: async (record) => {
      kept++;
      await write(out, `${JSON.stringify(record)}\n`);
    },
    reject: async (reject: Reject) => {
      counts[reject.reason] = (counts[reject.reason] ?? 0) + 1;
    },
  });
  await close(out);
  const dropped = Object.values(counts).reduce((a, b) => a + b, 0);
  return finish(started, kept + dropped, { kept, ...counts });
}

async function runPhase(phase: string, dir: string, scale: number): Promise<PhaseResult> {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, self, "--phase", phase, "--dir", dir, "--scale", String(scale)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 16 << 20 },
  );
  if (child.status !== 0) throw new Error(`phase ${phase} failed with status ${child.status}`);
  return JSON.parse(child.stdout.trim().split("\n").pop()!) as PhaseResult;
}

function sourcesIn(dir: string, scale: number): GeneratedSource[] {
  return SHAPES.map((shape) => ({
    shape,
    rows: Math.max(1, Math.round(shape.rows * scale)),
    file: path.join(dir, shape.file),
    plain: path.join(dir, `${shape.name}.plain.jsonl`),
    bytes: 0,
  }));
}

async function main(): Promise<void> {
  const scale = Number(arg("scale") ?? "1");
  const phase = arg("phase");
  if (phase) {
    const dir = arg("dir")!;
    const sources = sourcesIn(dir, scale);
    const result =
      phase === "copy"
        ? await phaseCopy(dir, sources)
        : phase === "normalize"
          ? await phaseNormalize(dir, sources)
          : phase === "read"
            ? await phaseReadFloor(dir)
            : await phaseDedup(dir);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }

  const dir = arg("dir") ?? (await mkdtemp(path.join(tmpdir(), "bench-ingest-")));
  const keep = process.argv.includes("--keep");
  try {
    const t0 = performance.now();
    const generated = await generateCorpus(dir, scale);
    const mb = generated.reduce((sum, g) => sum + g.bytes, 0) / 1e6;
    const rows = generated.reduce((sum, g) => sum + g.rows, 0);
    console.log(
      `corpus: ${rows} rows, ${mb.toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)}s (${dir})`,
    );

    const copy = await runPhase("copy", dir, scale);
    const normalize = await runPhase("normalize", dir, scale);
    const read = await runPhase("read", dir, scale);
    const dedup = await runPhase("dedup", dir, scale);
    const normalizedBytes = (await stat(path.join(dir, "normalize.jsonl"))).size / 1e6;

    const ratio = normalize.cpuSeconds / copy.cpuSeconds;
    const wallRatio = normalize.seconds / copy.seconds;
    const docsPerSecond = dedup.rows / dedup.cpuSeconds;
    const rows3 = (r: PhaseResult) =>
      `${r.cpuSeconds.toFixed(2)} CPU s (${r.seconds.toFixed(2)}s wall), ${(r.rows / r.cpuSeconds).toFixed(0)} rows per CPU s, peak RSS ${r.maxRssMiB.toFixed(0)} MiB`;
    console.log(`raw copy (floor):   ${rows3(copy)}`);
    console.log(`normalize:          ${rows3(normalize)}, ${normalizedBytes.toFixed(0)} MB out`);
    console.log(`read floor (dedup): ${rows3(read)}`);
    console.log(`dedup:              ${rows3(dedup)}; ${JSON.stringify(dedup.extra)}`);
    console.log("");
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${cpus().length} cores`,
    );
    console.log(
      `normalize / raw copy      ${ratio.toFixed(2)}x CPU, ${wallRatio.toFixed(2)}x wall   (target <= 2.0x)  ${ratio <= 2 ? "ok" : "MISSED"}`,
    );
    console.log(
      `normalize peak RSS        ${normalize.maxRssMiB.toFixed(0)} MiB (target <= 1024)  ${normalize.maxRssMiB <= 1024 ? "ok" : "MISSED"}`,
    );
    console.log(
      `dedup docs/s/core         ${docsPerSecond.toFixed(0)} per CPU second, ${(dedup.rows / dedup.seconds).toFixed(0)} per wall second   (target >= 5000)  ${docsPerSecond >= 5000 ? "ok" : "MISSED"}`,
    );
    console.log(`dedup / read floor        ${(dedup.cpuSeconds / read.cpuSeconds).toFixed(2)}x CPU`);
    console.log(`dedup peak RSS            ${dedup.maxRssMiB.toFixed(0)} MiB`);
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

await main();
