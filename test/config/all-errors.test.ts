// A config with mistakes in several blocks names all of them in one error, in file order, each with
// its key and line: the user fixes the file once instead of once per block.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/config/load.js";
import { ConfigError } from "../../pipeline/errors.js";
import { Runner } from "../../pipeline/runner.js";
import { STAGES } from "../../stages/index.js";
import { noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

// simulate comes before pack in the file, after it in the pipeline
const YAML = `datadir: x
stages:
  simulate:
    run_timout_s: 5
  pack:
    embeder: {}
  correct:
    run_timout_s: 5
`;

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("no error");
}

describe("every mistake of a config file in one error", () => {
  it("names the top-level key and each stage's, with their lines, in file order; exit 2", () => {
    const file = join(tempDir(), "typos.yaml");
    writeFileSync(file, YAML);
    const error = thrown(() => loadConfig({ file }, STAGES));
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      [
        `invalid configuration in ${file}:`,
        "  datadir (line 1): unknown key",
        "  stages.simulate.run_timout_s (line 4): unknown key",
        "  stages.pack.embeder (line 6): unknown key",
        "  stages.correct.run_timout_s (line 8): unknown key",
        "Fix the key(s) above; configs/default.yaml documents every key.",
      ].join("\n"),
    );
  });

  it("the runner, given a config loaded without its stages, also names every stage's mistakes", () => {
    const file = join(tempDir(), "typos.yaml");
    writeFileSync(file, YAML.replace("datadir", "data_dir").replace("  pack:", "  simualte: {}\n  pack:"));
    const error = thrown(() => new Runner(STAGES, loadConfig({ file }), { services: noServices }));
    expect(error.message).toMatch(
      new RegExp(
        [
          "stages\\.simulate\\.run_timout_s \\(line 4\\): unknown key",
          "stages\\.simualte \\(line 5\\): unknown stage\\. Stages are: download, ",
          "stages\\.pack\\.embeder \\(line 7\\): unknown key",
          "stages\\.correct\\.run_timout_s \\(line 9\\): unknown key",
        ].join(".*\\n {2}"),
      ),
    );
  });
});
