import { describe, expect, it } from "vitest";
import { outputsMatch, parseFloatLine } from "../../pipeline/eval/oj-judge.js";

describe("outputsMatch (SandboxFusion's CommonOJ rules)", () => {
  it("strips the whole output and each line", () => {
    expect(outputsMatch("  1 2 \n3\n\n", "1 2\n 3")).toBe(true);
    expect(outputsMatch("1\r\n2\r\n", "1\n2")).toBe(true);
  });

  it("compares case-insensitively unless asked not to", () => {
    expect(outputsMatch("YES", "yes")).toBe(true);
    expect(outputsMatch("YES", "yes", { caseSensitive: true })).toBe(false);
  });

  it("needs the same number of lines", () => {
    expect(outputsMatch("1\n2", "1")).toBe(false);
    expect(outputsMatch("", "0")).toBe(false);
  });

  it("accepts numeric lines within a relative 1e-5", () => {
    expect(outputsMatch("3.14159", "3.141592")).toBe(true);
    expect(outputsMatch("3.1415", "3.141592")).toBe(false);
    expect(outputsMatch("1e5", "100000.0")).toBe(true);
    expect(outputsMatch("0.0000000001", "0")).toBe(false);
    expect(outputsMatch("nan", "nan")).toBe(true);
    expect(outputsMatch("1 2", "1.0 2.0")).toBe(false);
  });

  it("reads numbers the way Python's float() does", () => {
    expect(parseFloatLine(" -2.5e3 ")).toBe(-2500);
    expect(parseFloatLine("1_000")).toBe(1000);
    expect(parseFloatLine(".5")).toBe(0.5);
    expect(parseFloatLine("5.")).toBe(5);
    expect(parseFloatLine("-inf")).toBe(Number.NEGATIVE_INFINITY);
    expect(parseFloatLine("1.2.3")).toBeUndefined();
    expect(parseFloatLine("0x10")).toBeUndefined();
    expect(parseFloatLine("")).toBeUndefined();
  });
});
