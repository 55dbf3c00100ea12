// leetcode's dialogues written at once move none of its outputs: its config's hash does not see them,
// so changing them (or the default's change from 8 to the role's requests in flight) never makes a
// completed leetcode stale, nor validate and export after it. Everything that shapes a dialogue does.
import { describe, expect, it } from "vitest";
import { STAGES } from "../../stages/index.js";
import { makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const hashWith = (...sets: string[]) => {
  const runner = makeRunner(STAGES, { dir: tempDir(), sets });
  return runner.configHash(runner.stage("leetcode"));
};

describe("leetcode's config hash", () => {
  it("does not move with the dialogues written at once, and moves with what shapes a dialogue", () => {
    const unset = hashWith();
    expect(hashWith("stages.leetcode.concurrency=8")).toBe(unset);
    expect(hashWith("stages.leetcode.concurrency=64")).toBe(unset);
    expect(hashWith("stages.leetcode.seed=7")).not.toBe(unset);
    expect(hashWith("stages.leetcode.follow_up.max_turns=3")).not.toBe(unset);
  });
});
