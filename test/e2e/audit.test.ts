// `pnpm pipeline audit data/sample/code-feedback-dialogues.jsonl` as a user on a fresh clone types it:
// the default config, no LLM endpoint and no hub set. It prints the verdict table (the failing
// dialogue dropped with its reason, the one with no code kept as `no-code`) and releases the others
// under their own ids; killed with SIGKILL while validate runs, the same command ends with the same
// verdict and the same bytes.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { probeIsolationMode } from "../sandbox/helpers.js";
import { type CliResult, runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";

const SAMPLE = "data/sample/code-feedback-dialogues.jsonl";
// nothing the audit runs may need a server: none is set
const NO_ENDPOINTS = { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, HF_ENDPOINT: undefined };

const audit = (dataDir: string, killWhen?: () => boolean) =>
  runCli(["audit", SAMPLE, "--data-dir", dataDir], { env: NO_ENDPOINTS, killWhen });

describe("pipeline audit on the bundled Code-Feedback-shaped sample", () => {
  const dir = tempDir("cf-audit-e2e-");
  const whole = join(dir, "whole");
  const killed = join(dir, "killed");
  let isolated = false;
  let reference: CliResult;
  const release = (data: string) => readFileSync(join(data, "export", "code-feedback-full.jsonl"), "utf8");

  beforeAll(async () => {
    isolated = (await probeIsolationMode()) !== null;
    if (isolated) reference = await audit(whole);
  });

  it("prints the verdict: released by outcome, dropped by reason, by language", (ctx) => {
    if (!isolated) ctx.skip();
    expect(reference.code, reference.stderr).toBe(0);
    expect(reference.stdout).toContain(
      [
        "code-feedback-dialogues (data/sample/code-feedback-dialogues.jsonl): pass rate 83.3%",
        "",
        "verdict              dialogues",
        "read                 6",
        "released             5",
        "  passed             4",
        "  no-code            1",
        "dropped              1",
        "  final-code-failed  1",
      ].join("\n"),
    );
    expect(reference.stdout).toMatch(/^python +1 +1$/m);
    expect(reference.stdout).toMatch(/^go +1 +0$/m);
  });

  it("releases the dialogues that pass under their original ids, and names the failing one's error", (ctx) => {
    if (!isolated) ctx.skip();
    const rows = release(whole)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { dialogue_id: string; method: string; validation: string });
    expect(rows.map((r) => [r.dialogue_id, r.validation]).sort()).toEqual([
      ["code-feedback-dialogues:1", "passed"],
      ["code-feedback-dialogues:2", "passed"],
      ["code-feedback-dialogues:4", "no-code"],
      ["code-feedback-dialogues:5", "passed"],
      ["code-feedback-dialogues:6", "passed"],
    ]);
    expect(new Set(rows.map((r) => r.method))).toEqual(new Set(["code-feedback-dialogues"]));
    const card = readFileSync(join(whole, "export", "README.md"), "utf8");
    expect(card).toContain("| 6 | 5 | 83.3% | final-code-failed 1 |");
  });

  it("writes its config to the data dir, where status and cat read the run with --config and --data-dir alone", async (ctx) => {
    if (!isolated) ctx.skip();
    const file = join(whole, "audit.yaml");
    expect(reference.stderr).toContain(
      `status, cat and report read this run with: --config ${file} --data-dir ${whole}\n`,
    );
    expect(reference.stderr).not.toContain("--set");
    const options = ["--config", file, "--data-dir", whole];
    const status = await runCli(["status", ...options], { env: NO_ENDPOINTS });
    expect(status.code, status.stderr).toBe(0);
    for (const stage of ["download", "audit", "validate", "export"])
      expect(status.stdout).toMatch(new RegExp(`^${stage} +complete `, "m"));
    expect(status.stdout).not.toContain("stale");
    // status under another config says which one reads the audit
    const plain = await runCli(["status", "--data-dir", whole], { env: NO_ENDPOINTS });
    expect(plain.stdout + plain.stderr).toContain(
      `this data dir holds an audit: add --config ${file} to read it as it ran`,
    );
    expect(status.stdout + status.stderr).not.toContain("holds an audit");
    const rejects = await runCli(["cat", "validate", "--rejects", ...options], { env: NO_ENDPOINTS });
    expect(rejects.stdout).toContain('"id":"code-feedback-dialogues:3","reason":"final-code-failed"');
  });

  it("releases and describes only the audit: no paper shape, no switched-off methods, no empty filtered set", (ctx) => {
    if (!isolated) ctx.skip();
    expect(reference.stderr).toContain(`wrote 5 dialogues to ${join(whole, "export")}\n`);
    expect(reference.stderr).not.toContain("per-method shape");
    expect(reference.stderr).not.toContain("not run (disabled)");
    const files = readdirSync(join(whole, "export")).filter((f) => f.includes("."));
    expect(files.sort()).toEqual([
      "README.md",
      "code-feedback-full.jsonl",
      "code-feedback-full.parquet",
      "code-feedback.jsonl",
      "code-feedback.parquet",
      "manifest.json",
      "report.html",
    ]);
    const card = readFileSync(join(whole, "export", "README.md"), "utf8");
    for (const absent of ["filtered-instruction", "per-method shape", "not run (disabled)", "## Models"])
      expect(card).not.toContain(absent);
    expect(card).toContain("Datasets audited: code-feedback-dialogues.");
    expect(card).toContain("| code-feedback-dialogues | 5 | 1.2 |");
    const report = readFileSync(join(whole, "export", "report.html"), "utf8");
    expect(report).toContain('<section id="audits">');
    expect(report).not.toContain('<section id="languages">');
    // filter completes on no pairs: its funnel and scores say so instead of charting zeros
    for (const id of ["funnel", "scores"])
      expect(report).toContain(`data-missing="${id}">no instruction pairs reached the complexity filter`);
    expect(report).not.toContain('data-chart="funnel"');
    expect(report).not.toContain('data-chart="scores-round-1"');
  });

  it("says what it takes, with exit 2, for an argument that is neither a file nor a dataset id", async () => {
    const result = await runCli(["audit", "no/such/file.jsonl", "--data-dir", join(dir, "none")], {
      env: NO_ENDPOINTS,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "no/such/file.jsonl: no such file or directory, and not a hub dataset id (owner/name)",
    );
  });

  it("says of the argument itself, with exit 2, that a glob matches no data file", async () => {
    const result = await runCli(["audit", "data/sample/no-such-*.jsonl", "--data-dir", join(dir, "none")], {
      env: NO_ENDPOINTS,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("data/sample/no-such-*.jsonl matches no JSONL, JSON or Parquet file");
    expect(result.stderr).not.toContain("stages.download");
  });

  it("points at --name, with exit 2, when the name it takes clashes with a method's", async () => {
    const result = await runCli(["audit", SAMPLE, "--name", "pack", "--data-dir", join(dir, "clash")], {
      env: NO_ENDPOINTS,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("`pnpm pipeline audit --name`");
  });

  it("goes on after a kill -9 during validate and ends with the same verdict and bytes", async (ctx) => {
    if (!isolated) ctx.skip();
    const first = await audit(killed, () => existsSync(join(killed, "validate", "manifest.json")));
    expect(first.signal, first.stderr).toBe("SIGKILL");
    const again = await audit(killed);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.slice(again.stdout.indexOf("code-feedback-dialogues ("))).toBe(
      reference.stdout.slice(reference.stdout.indexOf("code-feedback-dialogues (")),
    );
    expect(release(killed)).toBe(release(whole));
    // the same options: the config written before the kill is kept as it is
    expect(again.stderr).not.toContain("the audit's options changed");
    expect(readFileSync(join(killed, "audit.yaml"), "utf8")).toBe(
      readFileSync(join(whole, "audit.yaml"), "utf8").replaceAll(whole, killed),
    );
  });

  it("replaces its config when the options change, and reruns only what they change", async (ctx) => {
    if (!isolated) ctx.skip();
    const again = await runCli(
      ["audit", SAMPLE, "--data-dir", whole, "--set", "stages.export.parquet=false"],
      { env: NO_ENDPOINTS },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${join(whole, "audit.yaml")}: the audit's options changed`);
    expect(again.stderr).toMatch(/^validate: up to date/m);
    const config = readFileSync(join(whole, "audit.yaml"), "utf8");
    expect(config).toMatch(/^ {4}parquet: false$/m);
    const status = await runCli(["status", "--config", join(whole, "audit.yaml"), "--data-dir", whole], {
      env: NO_ENDPOINTS,
    });
    expect(status.stdout).toMatch(/^export +complete /m);
  });
});
