// `pnpm pipeline report` as a user runs it: rebuilds report.html from the manifests there are, with
// each stage's state as `status` judges it, and renders a screenshot of the whole page on request.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { pageSize, viewInBrowser } from "../../pipeline/report/browser.js";
import { FULL_RUN, writeManifests } from "../report/fixtures.js";
import { onSamples, runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";

const scratch = tempDir("cf-report-cli-");

it("rebuilds the report from the stages that ran, and screenshots it", async () => {
  const dataDir = path.join(scratch, "data");
  await writeManifests(dataDir, FULL_RUN.slice(0, 4));
  const png = path.join(scratch, "report.png");

  const run = await runCli(["report", ...onSamples(dataDir), "--screenshot", png]);

  expect(run.code).toBe(0);
  const file = path.join(dataDir, "export", "report.html");
  expect(run.stdout.trim().split("\n")).toEqual([png, file]);
  expect(run.stderr).toMatch(/report from download, normalize, dedup, filter \(not run: pack, .*export\)/);
  expect(run.stderr).not.toMatch(/did not draw/);
  const html = await readFile(file, "utf8");
  // hand-made manifests were not made by this configuration: the report says what `status` says
  expect(html).toMatch(/<td>stale \(its configuration changed\)<\/td>/);
  expect(html).toMatch(/data-chart="languages"/);
  expect(html).toMatch(/data-missing="validation"/);
  const image = await readFile(png);
  expect(image.subarray(1, 4).toString()).toBe("PNG");
  // sized to the page (it was a fixed 1200x5200): the PNG is exactly as big as the page measures itself
  const size = { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
  expect(run.stderr).toContain(`screenshot: ${size.width}x${size.height} (the whole page)`);
  expect(pageSize((await viewInBrowser(file)).dom)).toEqual(size);
  expect(size.height).not.toBe(5200);
  expect(size.height).toBeGreaterThan(900);
});

it("names the dialogue stages switched off, and the report says not run (disabled)", async () => {
  const dataDir = path.join(scratch, "data-off");
  await writeManifests(dataDir, FULL_RUN);
  const run = await runCli(["report", ...onSamples(dataDir, ["stages.leetcode.enabled=false"])]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toContain("(switched off: leetcode)");
  const html = await readFile(path.join(dataDir, "export", "report.html"), "utf8");
  expect(html).toMatch(/<tr><td>leetcode<\/td><td>not run \(disabled\)<\/td>/);
  expect(html).toContain("not run (disabled): leetcode-similar-problem, leetcode-follow-up");
});
