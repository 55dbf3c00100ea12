// The "done when": `pnpm pipeline run leetcode --config configs/sample.yaml` against a local
// OpenAI-compatible server makes both kinds of dialogue from the bundled TACO sample, and
// `pnpm pipeline cat leetcode` prints them in the shared dialogue format. The server answers as the
// standalone one does (no rules), so no translation passes here: the follow-ups come from TACO's
// own solutions.
import { describe, expect, it } from "vitest";
import { parseDialogue } from "../../pipeline/dialogue.js";
import { manifestStats, useLeetcodeCli } from "./leetcode-cli.js";

const leetcode = useLeetcodeCli("leetcode-e2e-");

describe("leetcode on the bundled sample", () => {
  it("runs, and cat prints similar-problem and follow-up dialogues", async () => {
    const run = await leetcode.run(["run", "leetcode"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/leetcode-similar-problem: \d+ dialogues/);
    expect(run.stderr).toMatch(/paper: 200 dialogues, 3.8 turns per dialogue/);

    const cat = await leetcode.run(["cat", "leetcode"]);
    expect(cat.code, cat.stderr).toBe(0);
    const lines = cat.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of lines) expect(parseDialogue(line)).toMatchObject({ ok: true });
    const methods = new Set(lines.map((l) => l.method));
    expect([...methods].sort()).toEqual(["leetcode-follow-up", "leetcode-similar-problem"]);

    const stats = manifestStats(leetcode.dataDir, "leetcode") as {
      validation: { solutions: Record<string, number> };
    };
    // the sample's wrong, crashing and never-ending solutions are found and counted
    expect(stats.validation.solutions).toMatchObject({ "wrong-answer": 2, "runtime-error": 1, timeout: 1 });

    const rejects = await leetcode.run(["cat", "leetcode", "--rejects"]);
    const reasons = rejects.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { reason: string }).reason);
    expect(reasons.sort()).toEqual(["bad-solutions", "no-passing-solution", "no-tests"]);
  });
});
