// The report a `run` writes once it has reached export: built after the run, from final manifests, so
// export's own row has its counts (it read 0/0 when export built the report before its manifest); a
// dialogue stage switched off reads "not run (disabled)".
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { z } from "zod";
import { reportAfterRun } from "../../pipeline/cli/report.js";
import { collectReport, renderReport } from "../../pipeline/report/index.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { validateStage } from "../../stages/index.js";
import { methodsOf } from "../../stages/validate/report-methods.js";
import { makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { FULL_RUN, REGISTRY, writeManifests } from "./fixtures.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function stage(name: string, upstream: string[], out: number, release = false): Stage<unknown> {
  return defineStage({
    name,
    description: `stand-in for ${name}`,
    upstream,
    kind: "global",
    configSchema: z.object({}).strict(),
    // the stage whose directory holds the release, and so the report
    ...(release ? { release: { files: () => [] } } : {}),
    async run(_ctx, emit) {
      for (let i = 0; i < out; i++) await emit.out({ id: `${name}-${i}` });
    },
    async summarize() {
      return { made: out };
    },
  }) as Stage<unknown>;
}

it("is written after a run that reaches the release stage, with that stage's own counts", async () => {
  const dir = tempDir("cf-after-run-");
  dirs.push(dir);
  const runner = makeRunner([stage("validate", [], 3), stage("export", ["validate"], 2, true)], { dir });

  const partial = await runner.run(["validate"]);
  expect(await reportAfterRun(runner, partial)).toBeUndefined();
  expect(existsSync(join(dir, "data", "export", "report.html"))).toBe(false);

  const reports = await runner.run(["export"]);
  const file = await reportAfterRun(runner, reports);
  expect(file).toBe(join(dir, "data", "export", "report.html"));
  const html = readFileSync(file!, "utf8");
  expect(html).toMatch(
    /<tr><td>export<\/td><td>complete<\/td><td class="num">[^<]*<\/td><td class="num">2<\/td>/,
  );
  expect(html).toMatch(
    /<tr><td>validate<\/td><td>complete<\/td><td class="num">[^<]*<\/td><td class="num">3<\/td>/,
  );

  // export up to date: the run skips it and the report is still rebuilt (a no-op run refreshes it)
  const again = await runner.run(["export"]);
  expect(again.find((r) => r.stage === "export")?.action).toBe("skipped");
  expect(await reportAfterRun(runner, again)).toBe(file);
});

it("says a switched-off dialogue stage was not run (disabled), never 0, and whether the shape is the paper's", async () => {
  const dir = tempDir("cf-after-run-");
  dirs.push(dir);
  await writeManifests(dir, FULL_RUN);
  const data = collectReport(dir, { registry: REGISTRY, disabled: ["leetcode", "correct"] });
  expect(data.stages.find((s) => s.name === "leetcode")?.state).toBe("not run (disabled)");
  expect(data.flow.find((s) => s.stage === "leetcode")?.records).toBeUndefined();
  const { shape } = methodsOf(data.view.forStage(validateStage, "methods"));
  expect(shape?.reproduces).toBe(false);
  expect(shape?.verdict).toContain("leetcode-follow-up not run (disabled)");
  // the runner's own judgement (state "disabled") reads the same
  const judged = collectReport(dir, { registry: REGISTRY, states: { leetcode: { state: "disabled" } } });
  expect(judged.stages.find((s) => s.name === "leetcode")?.state).toBe("not run (disabled)");
  expect(judged.disabled).toEqual(["leetcode"]);
  const html = renderReport(data);
  expect(html).toMatch(/<tr><td>leetcode-follow-up<\/td><td class="num">not run \(disabled\)<\/td>/);
  expect(html).toMatch(/<tr><td>code-correction<\/td><td class="num">not run \(disabled\)<\/td>/);
  expect(html).toMatch(/data-shape="differs">This run does not reproduce/);
  expect(html).toContain(
    "Dialogue methods run: single-turn-packing, interaction-simulation; not run (disabled): code-correction, leetcode-similar-problem, leetcode-follow-up.",
  );
  // pack's fixture has 2.51 turns per dialogue against the paper's 2.0
  expect(html).toMatch(
    /<td>single-turn-packing<\/td>(<td[^>]*>[^<]*<\/td>){5}<td class="num">\+25% \(over 20%\)<\/td>/,
  );
});
