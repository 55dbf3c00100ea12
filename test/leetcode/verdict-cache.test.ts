// The verdict cache after a `kill -9`: a last line cut mid-write, or a line that is not JSON, costs
// that one verdict and nothing else; the next append starts on a line of its own. Each verdict keeps
// what the sandbox ran for it, handed to the first read after a reopen only.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VerdictCache } from "../../stages/leetcode/verdict-cache.js";

const dir = mkdtempSync(path.join(tmpdir(), "leetcode-verdicts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the verdict cache", () => {
  it("keeps what it wrote across a reopen", () => {
    const file = path.join(dir, "plain.jsonl");
    const cache = new VerdictCache<{ verdict: string }>(file);
    cache.set("a", { verdict: "passed" });
    cache.set("b", { verdict: "timeout" });
    cache.close();
    const again = new VerdictCache<{ verdict: string }>(file);
    expect(again.size).toBe(2);
    expect(again.get("b")).toEqual({ verdict: "timeout" });
    again.close();
  });

  it("opens a file torn by a kill mid-write (a multi-byte character cut too), drops only the torn line, and appends after it cleanly", () => {
    const file = path.join(dir, "torn.jsonl");
    const whole = [
      JSON.stringify({ k: "a", v: { verdict: "passed", detail: "état" } }),
      "not json at all",
      JSON.stringify({ k: "b", v: { verdict: "wrong-answer" } }),
    ];
    writeFileSync(file, `${whole.join("\n")}\n`);
    const torn = Buffer.from(JSON.stringify({ k: "c", v: { verdict: "passed", detail: "√x" } }));
    // cut inside the three bytes of "√"
    appendFileSync(file, torn.subarray(0, torn.indexOf(Buffer.from("√")) + 1));

    const cache = new VerdictCache<{ verdict: string; detail?: string }>(file);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toEqual({ verdict: "passed", detail: "état" });
    expect(cache.get("c")).toBeUndefined();
    cache.set("c", { verdict: "timeout" });
    cache.close();

    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.at(-2)).toBe(JSON.stringify({ k: "c", v: { verdict: "timeout" } }));
    const reopened = new VerdictCache<{ verdict: string }>(file);
    expect(reopened.size).toBe(3);
    expect(reopened.get("c")).toEqual({ verdict: "timeout" });
    reopened.close();
  });

  it("reads a file that is nothing but a torn line as empty", () => {
    const file = path.join(dir, "only-torn.jsonl");
    writeFileSync(file, '{"k":"a","v":{"verd');
    const cache = new VerdictCache<{ verdict: string }>(file);
    expect(cache.size).toBe(0);
    cache.set("a", { verdict: "passed" });
    cache.close();
    expect(readFileSync(file, "utf8")).toBe(`${JSON.stringify({ k: "a", v: { verdict: "passed" } })}\n`);
  });

  it("skips lines that parse but are not entries (null, a number) instead of failing the run", () => {
    const file = path.join(dir, "odd.jsonl");
    writeFileSync(file, `null\n42\n${JSON.stringify({ k: "a", v: { verdict: "passed" } })}\n`);
    const cache = new VerdictCache<{ verdict: string }>(file);
    expect(cache.get("a")).toEqual({ verdict: "passed" });
    expect(cache.size).toBe(1);
    cache.close();
  });
});

describe("the sandbox programs behind cached verdicts", () => {
  it("are kept with each verdict and handed to the first read after a reopen only", () => {
    const file = path.join(dir, "costs.jsonl");
    const cost = { runs: 3, busyMs: 120, endpoints: { "http://a/run_code": { runs: 3, busyMs: 120 } } };
    const cache = new VerdictCache<{ verdict: string }>(file);
    cache.set("a", { verdict: "passed" }, cost);
    cache.set("b", { verdict: "timeout" });
    // judged by this process: counted as its programs ran
    expect(cache.replayCost("a")).toBeUndefined();
    cache.close();
    appendFileSync(file, `${JSON.stringify({ k: "c", v: { verdict: "passed" }, x: { runs: "3" } })}\n`);

    const again = new VerdictCache<{ verdict: string }>(file);
    expect(again.replayCost("a")).toEqual(cost);
    expect(again.replayCost("a")).toBeUndefined();
    expect(again.replayCost("b")).toBeUndefined();
    expect(again.get("c")).toEqual({ verdict: "passed" });
    expect(again.replayCost("c")).toBeUndefined();
    again.close();
  });
});
