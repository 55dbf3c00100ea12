// `run leetcode --dry-run` on the bundled sample: before any run it sends nothing, runs nothing and
// writes nothing, yet counts requests (an upper bound: solutions not yet run are assumed to pass);
// after a run it finds cached every request it would send, as many as the run made (sent or cached),
// which holds only if it builds each request (texts, chained turns, translations) as the run does.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { stored, useLeetcodeCli } from "./leetcode-cli.js";

const leetcode = useLeetcodeCli("leetcode-estimate-");
const sent = (stderr: string) => Number(/leetcode: would send (\d+) requests/.exec(stderr)?.[1]);
const cached = (stderr: string) => Number(/; (\d+) answers already cached/.exec(stderr)?.[1]);

describe("leetcode --dry-run", () => {
  it("estimates without asking the model or running a solution, then finds a finished run's requests cached", async () => {
    const download = await leetcode.run(["run", "download"]);
    expect(download.code, download.stderr).toBe(0);

    const before = await leetcode.run(["run", "leetcode", "--dry-run"]);
    expect(before.code, before.stderr).toBe(0);
    expect(sent(before.stderr)).toBeGreaterThan(0);
    expect(before.stderr).toMatch(/solutions not yet run assumed to pass/);
    expect(leetcode.server.count).toBe(0);
    expect(await stored(leetcode.dataDir, "leetcode")).toEqual([]);
    expect(existsSync(path.join(leetcode.dataDir, "leetcode/work/verdicts"))).toBe(false);

    const run = await leetcode.run(["run", "leetcode"]);
    expect(run.code, run.stderr).toBe(0);
    const asked = leetcode.server.count;
    expect(asked).toBeGreaterThan(0);
    const usage = new StageStore(leetcode.dataDir, "leetcode").manifest()!.usage!;
    expect(usage.requests).toBe(asked);
    // identical requests (a problem opening both kinds of dialogue) are answered from the cache
    const made = usage.requests + usage.cachedRequests;
    expect(sent(before.stderr)).toBeGreaterThanOrEqual(made);

    // a config change that makes the stage stale without changing any request (no row of the
    // sample is near the limit; an operational setting would not make it stale)
    const after = await leetcode.run([
      "run",
      "leetcode",
      "--dry-run",
      "--set",
      "stages.leetcode.max_row_bytes=100000000",
    ]);
    expect(after.code, after.stderr).toBe(0);
    expect(sent(after.stderr)).toBe(0);
    expect(cached(after.stderr)).toBe(made);
    expect(after.stderr).not.toMatch(/assumed to pass \(an upper bound\)/);
    expect(leetcode.server.count).toBe(asked);
  });
});
