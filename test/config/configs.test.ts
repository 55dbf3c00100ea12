// The shipped configs must load and validate against every registered stage.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/config/load.js";
import { silentLogger } from "../../pipeline/log.js";
import { Runner } from "../../pipeline/runner.js";
import { STAGES } from "../../stages/index.js";
import { noServices } from "../support/runner-kit.js";

describe("shipped configs", () => {
  for (const file of ["configs/default.yaml", "configs/sample.yaml"]) {
    it(`${file} validates for every stage`, () => {
      const loaded = loadConfig({ file });
      const runner = new Runner(STAGES, loaded, { services: noServices, log: silentLogger });
      for (const stage of STAGES) expect(() => runner.configOf(stage)).not.toThrow();
    });
  }

  it("default.yaml holds the paper's filter settings", () => {
    const loaded = loadConfig({ file: "configs/default.yaml" });
    expect(loaded.config.llm.scorer.model).toBe("Qwen/Qwen-72B-Chat");
    expect(loaded.config.stages.filter).toMatchObject({ threshold: 4, rule: "sequential" });
  });
});
