// `status` and `run --dry-run` as a user reads them: one line per stage, the full error on request,
// and which config and data dir they read.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.js";
import { toyCli, toyConfig } from "../support/toy-cli-kit.js";

const LONG_ERROR = [
  "expand: 3 records failed: 3 x llm-error (e.g. the weak role's endpoint answered HTTP 500",
  ...Array.from(
    { length: 20 },
    (_, i) => `    at frame ${i} (/some/long/path/to/a/module/file-${i}.js:10:5)`,
  ),
  "and a last line with the advice",
].join("\n");

function failStage(dir: string, stage: string): void {
  const path = join(dir, "data", stage, "manifest.json");
  const manifest = JSON.parse(readFileSync(path, "utf8"));
  writeFileSync(path, JSON.stringify({ ...manifest, state: "partial", lastError: LONG_ERROR }));
}

describe("status", () => {
  it("keeps one short line per stage after a multi-line error; --stage and --json give the full text", () => {
    const { dir, config } = toyConfig();
    expect(toyCli(["run", "expand", "--config", config]).code).toBe(0);
    failStage(dir, "expand");

    const table = toyCli(["status", "--config", config]);
    expect(table.code).toBe(0);
    const rows = table.stdout.trimEnd().split("\n");
    expect(rows).toHaveLength(4); // header + three stages: the error adds no line
    for (const row of rows) expect(row.length).toBeLessThan(200);
    expect(table.stdout).toMatch(/^expand\s+partial \(expand: 3 records failed: .*\.\.\.\)/m);

    const detail = toyCli(["status", "--stage", "expand", "--config", config]);
    expect(detail.code).toBe(0);
    expect(detail.stdout).toContain(LONG_ERROR);
    expect(detail.stdout).toMatch(/^records: 9 in, 9 out, 3 rejected, 0 failed$/m);
    expect(detail.stdout).not.toContain("numbers");

    const json = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(json[1].reason).toBe(LONG_ERROR);
    expect(json[1].lastError).toBe(LONG_ERROR);
  });

  it("says which config and data dir it read", () => {
    const { dir, config } = toyConfig();
    const status = toyCli(["status", "--config", config]);
    expect(status.stderr).toContain(`config ${config}, data dir ${join(dir, "data")}`);
    const dry = toyCli(["run", "expand", "--dry-run", "--config", config]);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain(`config ${config}, data dir ${join(dir, "data")}`);
  });

  it("with nothing run in its data dir, names the config beside it whose data dir has runs", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "configs"));
    writeFileSync(join(dir, "configs", "default.yaml"), "data_dir: data\n");
    writeFileSync(join(dir, "configs", "sample.yaml"), "data_dir: data/runs/sample\n");
    writeFileSync(join(dir, "configs", "unrelated.yaml"), "data_dir: elsewhere\n");
    const run = toyCli(["run", "numbers", "--config", "configs/sample.yaml"], { cwd: dir });
    expect(run.code).toBe(0);

    const bare = toyCli(["status", "--config", "configs/default.yaml"], { cwd: dir });
    expect(bare.code).toBe(0);
    expect(bare.stderr).toContain("config configs/default.yaml, data dir data");
    expect(bare.stderr).toContain(
      "nothing has run in data; data/runs/sample (configs/sample.yaml) has 1 stage(s) run: add --config configs/sample.yaml to see them",
    );
    expect(bare.stderr).not.toContain("unrelated");
    // once the default data dir has runs of its own, no hint
    expect(toyCli(["run", "numbers", "--config", "configs/default.yaml"], { cwd: dir }).code).toBe(0);
    expect(toyCli(["status", "--config", "configs/default.yaml"], { cwd: dir }).stderr).not.toContain(
      "nothing has run",
    );
  });
});

describe("--limit", () => {
  it("refuses 0, -1 and fractions with exit 2 before touching any stage", () => {
    const { config } = toyConfig();
    for (const limit of ["0", "-1", "2.5"]) {
      const r = toyCli(["run", "expand", "--config", config, "--limit", limit]);
      expect(r.code, limit).toBe(2);
      expect(r.stderr, limit).toContain(`--limit ${limit}: expected a whole number of rows, 1 or more`);
    }
    expect(toyCli(["status", "--config", config, "--limit", "0"]).code).toBe(2);
    const status = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(status.map((s: { state: string }) => s.state)).toEqual([
      "not started",
      "not started",
      "not started",
    ]);
  });
});

describe("a switched-off stage on the command line", () => {
  it("status shows it disabled with the key; cat says it has no records; the stage after it runs", () => {
    const { config } = toyConfig();
    const off = ["--config", config, "--set", "stages.expand.enabled=false"];
    const table = toyCli(["status", ...off]).stdout;
    expect(table).toMatch(/^expand\s+disabled \(stages\.expand\.enabled: false\)/m);
    const cat = toyCli(["cat", "expand", ...off]);
    expect(cat.code).toBe(0);
    expect(cat.stdout).toBe("");
    expect(cat.stderr).toContain(
      "note: expand is switched off (stages.expand.enabled: false): it has no records",
    );
    const run = toyCli(["run", "total", ...off]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("expand: switched off (stages.expand.enabled: false)");
    expect(JSON.parse(toyCli(["cat", "total", ...off]).stdout)).toMatchObject({ id: "total", n: 0 });
  });
});
