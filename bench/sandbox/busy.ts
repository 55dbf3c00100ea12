// The benchmarks' sandbox load: `runs` short Python programs (each sums a range and prints it), with
// 4 x `workers` of them in flight so the sandbox's queue never runs dry. A program that does not
// succeed stops the benchmark: a rate over failures would measure something else.
import { runBlock } from "../../pipeline/execution/index.js";
import type { CodeRunner } from "../../pipeline/sandbox/index.js";

/** The benchmarks' trivial Python program. */
export function sumProgram(n: number): string {
  return `total = sum(range(${n}))\nprint(total)`;
}

export async function keepSandboxBusy(runner: CodeRunner, runs: number, workers: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 * workers }, async () => {
      while (next < runs) {
        const result = await runBlock(runner, sumProgram(next++ % 97), "python");
        if (result.status !== "success")
          throw new Error(`a benchmark program failed: ${result.status} ${result.stderr}`);
      }
    }),
  );
}
