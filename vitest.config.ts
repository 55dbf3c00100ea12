import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A time limit only catches a hang: a loaded CI machine runs the CLI and the sandbox several times
    // slower, so no test sets a shorter one unless the limit is what it asserts.
    testTimeout: 900_000,
    hookTimeout: 900_000,
    pool: "forks",
    // Most test files wait on child processes, local servers, the sandbox or Slurm rather than
    // compute, so one file more than there are cores keeps the CPUs busy. vitest's default (cores - 1)
    // ran the suite one file at a time on 2 cores: 12 min instead of 7.
    maxWorkers: availableParallelism() + 1,
  },
});
