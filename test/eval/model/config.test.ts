// The `eval.model` section: the benchmark sources reuse decontamination's repos and files, a key
// left out of a source keeps its default, and the EvalPlus sets are pinned to commits.
import { describe, expect, it } from "vitest";
import { evalConfigSchema } from "../../../pipeline/eval/config.js";
import { DEFAULT_BENCHMARK_SOURCES } from "../../../pipeline/eval/model/config.js";
import { DEFAULT_BENCHMARKS } from "../../../stages/dedup.js";

describe("eval.model config", () => {
  it("fetches HumanEval and MBPP from the repos and files dedup decontaminates against", () => {
    for (const spec of DEFAULT_BENCHMARKS) {
      const source = DEFAULT_BENCHMARK_SOURCES[spec.name as "humaneval" | "mbpp"];
      expect(source.repo).toBe(spec.repo);
      expect(source.files).toEqual(spec.files);
    }
    for (const name of ["humaneval+", "mbpp+"] as const) {
      expect(DEFAULT_BENCHMARK_SOURCES[name].revision).toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it("defaults to the paper's settings and merges a partial source over its default", () => {
    const parsed = evalConfigSchema.parse({ model: { benchmarks: { "mbpp+": { revision: "main" } } } });
    expect(parsed.model).toMatchObject({ rounds: 2, feedback: "execution", feedback_role: "strong" });
    expect(parsed.model.benchmarks["mbpp+"]).toEqual({
      ...DEFAULT_BENCHMARK_SOURCES["mbpp+"],
      revision: "main",
    });
    expect(parsed.model.benchmarks.humaneval).toEqual(DEFAULT_BENCHMARK_SOURCES.humaneval);
    expect(() => evalConfigSchema.parse({ model: { benchmarks: { mbpp: { revison: "x" } } } })).toThrow();
    expect(() => evalConfigSchema.parse({ model: { feedback: "telepathy" } })).toThrow();
  });
});
