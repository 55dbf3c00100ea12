import { afterEach, describe, expect, it } from "vitest";
import { present } from "./required.js";

describe("a test's requirement of the host", () => {
  afterEach(() => {
    delete process.env.CODEFEEDBACK_REQUIRE_SEEDS;
  });

  it("runs where the thing is at hand, required or not", () => {
    expect(present("SEEDS", undefined)).toBe(true);
    process.env.CODEFEEDBACK_REQUIRE_SEEDS = "1";
    expect(present("SEEDS", undefined)).toBe(true);
  });

  it("skips where it is missing and not required", () => {
    expect(present("SEEDS", "no seed here")).toBe(false);
  });

  it("fails, saying what is missing, where it is missing and required", () => {
    process.env.CODEFEEDBACK_REQUIRE_SEEDS = "1";
    expect(() => present("SEEDS", "no seed here")).toThrow("CODEFEEDBACK_REQUIRE_SEEDS=1 but no seed here");
  });
});
