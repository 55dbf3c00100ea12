import { describe, expect, it } from "vitest";
import { meanPassAtK, parseKs, passAtK } from "../../pipeline/eval/pass-at-k.js";

describe("passAtK", () => {
  it("matches hand-computed values of 1 - C(n-c,k)/C(n,k)", () => {
    expect(passAtK(1, 1, 1)).toBe(1);
    expect(passAtK(1, 0, 1)).toBe(0);
    expect(passAtK(3, 1, 1)).toBeCloseTo(1 / 3, 12);
    // 1 - C(2,2)/C(3,2) = 1 - 1/3
    expect(passAtK(3, 1, 2)).toBeCloseTo(2 / 3, 12);
    // 1 - C(7,3)/C(10,3) = 1 - 35/120
    expect(passAtK(10, 3, 3)).toBeCloseTo(85 / 120, 12);
    // 1 - C(5,5)/C(10,5) = 1 - 1/252
    expect(passAtK(10, 5, 5)).toBeCloseTo(251 / 252, 12);
    expect(passAtK(5, 4, 2)).toBe(1);
  });

  it("stays exact where binomials overflow", () => {
    // C(200,100) overflows 2^53; 1 - C(199,100)/C(200,100) = 1 - 100/200
    expect(passAtK(200, 1, 100)).toBeCloseTo(0.5, 12);
    expect(passAtK(1000, 0, 500)).toBe(0);
  });

  it("is undefined when fewer than k samples were drawn", () => {
    expect(passAtK(2, 0, 3)).toBeUndefined();
  });

  it("rejects impossible counts", () => {
    expect(() => passAtK(2, 3, 1)).toThrow(RangeError);
    expect(() => passAtK(2, 1, 0)).toThrow(RangeError);
  });
});

describe("meanPassAtK", () => {
  it("averages over questions with enough samples and counts them", () => {
    const questions = [
      { n: 3, c: 1 },
      { n: 1, c: 1 },
      { n: 2, c: 0 },
    ];
    expect(meanPassAtK(questions, 1).value).toBeCloseTo((1 / 3 + 1 + 0) / 3, 12);
    expect(meanPassAtK(questions, 2)).toEqual({ value: expect.closeTo((2 / 3 + 0) / 2, 12), questions: 2 });
    expect(meanPassAtK(questions, 5)).toEqual({ value: null, questions: 0 });
  });
});

describe("parseKs", () => {
  it("parses, sorts and dedupes", () => {
    expect(parseKs("10, 1,100,1")).toEqual([1, 10, 100]);
  });
  it("rejects bad values", () => {
    expect(() => parseKs("1,x")).toThrow('k must be a positive integer, got "x"');
    expect(() => parseKs("0")).toThrow(RangeError);
    expect(() => parseKs(" ")).toThrow(/no k values/);
  });
});
