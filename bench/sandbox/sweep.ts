// The sandbox server under load: at each level, that many /run_code requests in flight at once from a
// plain HTTP client (as a SandboxFusion client sends them: no retries, its default timeouts), over a
// mix of languages, until enough have answered. Per level: programs/s, p50/p99 latency and errors (any
// answer but HTTP 200 with status Success; the programs are correct).
import { type BenchProgram, HUMANEVAL_PROGRAMS } from "./programs.js";

const HELLOS: BenchProgram[] = [
  { language: "python", code: "print(sum(range(10)))" },
  { language: "bash", code: 'echo "$((6 * 7))"' },
  { language: "nodejs", code: "console.log([1, 2, 3].map((x) => x * 2).join(','))" },
];

/** Python weighs most, as in the pipeline's own load; every compiled language is in. */
export const SWEEP_MIX: BenchProgram[] = [...HUMANEVAL_PROGRAMS, ...HELLOS, HUMANEVAL_PROGRAMS[0]!];

export interface SweepLevel {
  parallel: number;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** what went wrong, by kind (HTTP status or response status and message), with counts */
  errors: Map<string, number>;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function send(url: string, program: BenchProgram): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch(`${url}/run_code`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: program.code, language: program.language }),
    });
  } catch (error) {
    return `no answer: ${(error as Error).message}`;
  }
  const text = await response.text();
  if (response.status !== 200) return `HTTP ${response.status}`;
  const json = JSON.parse(text) as { status: string; message: string };
  return json.status === "Success"
    ? null
    : `${program.language} ${json.status}: ${json.message.slice(0, 80)}`;
}

export async function sweepLevel(url: string, parallel: number, requests: number): Promise<SweepLevel> {
  const latencies: number[] = [];
  const errors = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < requests) {
        const program = SWEEP_MIX[next++ % SWEEP_MIX.length]!;
        const sent = performance.now();
        const error = await send(url, program);
        latencies.push(performance.now() - sent);
        if (error) errors.set(error, (errors.get(error) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    parallel,
    requests,
    seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors,
  };
}
