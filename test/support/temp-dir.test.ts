// The tests' temporary dirs go away on their own: one a test made, once that test is over (passed or
// failed); one made outside any test, not before the file's last test.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "./temp-dir.js";

const forTheFile = tempDir("cf-temp-dir-file-");
let fromBeforeAll = "";
let fromBeforeEach = "";
const seen: string[] = [];

beforeAll(() => {
  fromBeforeAll = tempDir("cf-temp-dir-all-");
});

describe("tempDir", () => {
  beforeEach(() => {
    fromBeforeEach = tempDir("cf-temp-dir-each-");
    seen.push(fromBeforeEach);
  });

  it("made in a test, is there for the test", () => {
    const dir = tempDir("cf-temp-dir-test-");
    writeFileSync(join(dir, "file"), "x");
    seen.push(dir);
    expect(existsSync(join(dir, "file"))).toBe(true);
    expect(existsSync(fromBeforeEach)).toBe(true);
  });

  it.fails("made in a test that fails, is there until it has failed", () => {
    const dir = tempDir("cf-temp-dir-failing-");
    seen.push(dir);
    throw new Error(`fails with ${dir} still there`);
  });

  it("is gone once the test that made it (or its beforeEach) is over", () => {
    const earlier = seen.slice(0, -1);
    expect(earlier).toHaveLength(4);
    for (const dir of earlier) expect(existsSync(dir), dir).toBe(false);
    expect(existsSync(fromBeforeEach)).toBe(true);
  });

  it("made outside a test, stays for the file's later tests", () => {
    expect(existsSync(forTheFile)).toBe(true);
    expect(existsSync(fromBeforeAll)).toBe(true);
  });
});

afterAll(() => {
  // the file's own afterAll hooks run before the dirs made outside tests are removed
  expect(existsSync(forTheFile)).toBe(true);
  expect(existsSync(fromBeforeAll)).toBe(true);
});
