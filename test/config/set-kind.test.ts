// `--set <block>.kind=X` on a tagged block (the pack embedder) replaces the block: the file's keys for
// the old kind are not carried into the new one, where they would be unknown keys.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/config/load.js";
import { Runner } from "../../pipeline/runner.js";
import { STAGES } from "../../stages/index.js";
import { noServices } from "../support/runner-kit.js";

const configFile = new URL("../../configs/default.yaml", import.meta.url).pathname;

function load(sets: string[]) {
  const loaded = loadConfig({ file: configFile, sets });
  // the runner validates every stage's section, as `run` and `status` do
  new Runner(STAGES, loaded, { services: noServices });
  return loaded.config.stages.pack as { embedder: Record<string, unknown> };
}

describe("--set a block's kind", () => {
  it("switching the pack embedder to lexical replaces the transformers keys of the file", () => {
    expect(load([]).embedder.kind).toBe("transformers");
    expect(load(["stages.pack.embedder.kind=lexical"]).embedder).toEqual({ kind: "lexical" });
  });

  it("other --set keys of that block go into the new one, whatever their order", () => {
    const embedder = load([
      "stages.pack.embedder.dimensions=256",
      "stages.pack.embedder.kind=lexical",
      "stages.pack.embedder.batch_size=64",
    ]).embedder;
    expect(embedder).toEqual({ kind: "lexical", dimensions: 256, batch_size: 64 });
  });

  it("setting the kind the file already has keeps the block, and a wrong key is still named", () => {
    expect(load(["stages.pack.embedder.kind=transformers"]).embedder).toMatchObject({
      kind: "transformers",
      model: "Xenova/bert-base-nli-mean-tokens",
    });
    expect(() => load(["stages.pack.embedder.kind=lexical", "stages.pack.embedder.model=x"])).toThrow(
      /stages\.pack\.embedder\.model \(from --set\): unknown key/,
    );
  });
});
