// The e2e benchmark's ideal times, from a stage's manifest: its sandbox programs bound it by their
// count at the sandbox's own rate, by their busy time over its workers or by the longest of them,
// whichever is longer, plus the calls the sandbox waits on; leetcode, which judges before it writes,
// is held to the sum of its judging and its writing.
import { describe, expect, it } from "vitest";
import { idealOf } from "../../bench/e2e/ideal.js";

const base = { wallS: 100, requests: 0, latencyS: 0.5, llmConcurrency: 10, sandboxRate: 10, workers: 2 };

describe("idealOf", () => {
  it("bounds a sandbox stage by its programs' count or their busy time, whichever is longer", () => {
    const light = idealOf({ ...base, stage: "validate", sandbox: { runs: 500, busyMs: 10_000 } });
    expect(light).toMatchObject({ sandboxS: 50, bound: "sandbox", overhead: 1 });
    // heavier programs than the baseline's: 200 s of busy time over 2 workers
    const heavy = idealOf({ ...base, stage: "validate", sandbox: { runs: 500, busyMs: 200_000 } });
    expect(heavy).toMatchObject({ sandboxS: 100, bound: "sandbox", overhead: 0 });
    // no programs: nothing to be bound by
    expect(idealOf({ ...base, stage: "validate", sandbox: undefined })).toMatchObject({
      bound: "pipeline",
      overhead: undefined,
    });
  });

  it("bounds a stage by its longest program, which no second worker can share", () => {
    const one = idealOf({
      ...base,
      stage: "validate",
      sandbox: { runs: 20, busyMs: 14_000, longestMs: 10_000 },
    });
    expect(one).toMatchObject({ sandboxS: 10, bound: "sandbox" });
  });

  it("adds to a dialogue stage's sandbox time the calls before its first program and after its last", () => {
    // correct: the mistake is asked for before anything runs, the analysis after the last run
    const correct = idealOf({
      ...base,
      stage: "correct",
      requests: 30,
      sandbox: { runs: 500, busyMs: 10_000 },
    });
    expect(correct).toMatchObject({ sandboxS: 51, bound: "sandbox" });
    expect(correct.overhead).toBeCloseTo(100 / 51 - 1);
    // validate asks nothing: its programs alone
    expect(idealOf({ ...base, stage: "validate", sandbox: { runs: 500, busyMs: 10_000 } }).sandboxS).toBe(50);
  });

  it("holds leetcode to its judging and its writing one after the other", () => {
    const ideal = idealOf({ ...base, stage: "leetcode", requests: 400, sandbox: { runs: 300, busyMs: 0 } });
    // 400 requests x 0.5 s / 10 in flight = 20 s, then 300 programs at 10 a second = 30 s
    expect(ideal).toMatchObject({ llmS: 20, sandboxS: 30, idealS: 50, bound: "LLM+sandbox", overhead: 1 });
    // a few requests: one dialogue's turns, one after another, bound the writing
    const few = idealOf({
      ...base,
      stage: "leetcode",
      requests: 40,
      sandbox: { runs: 20, busyMs: 12_000, longestMs: 10_000 },
    });
    // judging: the longest program (10 s); writing: 4 calls one after another (2 s)
    expect(few).toMatchObject({ idealS: 12, bound: "LLM+sandbox" });
  });
});
