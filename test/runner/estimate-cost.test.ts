// A dry-run's cost for a model without a price says "price unknown", not "~$0.00".
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RequestEstimator } from "../../pipeline/llm/estimator.js";
import type { Services } from "../../pipeline/services.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { numbersStage } from "../support/toy-stages.js";

/** One request per input record to the role named in its config, estimated as filter does. */
const askStage = defineStage({
  name: "ask",
  description: "asks its role about every number",
  upstream: ["numbers"],
  kind: "record",
  configSchema: z.object({ role: z.string().default("weak") }).strict(),
  estimate: async (ctx) => {
    const estimator = ctx.services.llmEstimator!(ctx.config.role);
    let requests = 0;
    let promptTokens = 0;
    let completionTokens = 0;
    let costUsd = 0;
    for await (const record of ctx.read("numbers")) {
      const e = estimator.estimate([{ role: "user", content: `is ${record.value} prime?` }], {
        max_tokens: 10,
      });
      requests++;
      promptTokens += e.promptTokens;
      completionTokens += e.completionTokens;
      costUsd += e.costUsd;
    }
    return { requests, promptTokens, completionTokens, costUsd };
  },
  process: async (record) => ({ out: [record] }),
});

function services(prices: Record<string, { prompt: number; completion: number }>): Services {
  const models: Record<string, string> = { weak: "gpt-3.5-turbo-x", strong: "unpriced-model" };
  return {
    ...noServices,
    llmEstimator: (role) =>
      new RequestEstimator({
        role,
        model: models[role]!,
        sampling: {},
        price: prices[models[role]!],
        cache: () => undefined,
        noCache: false,
      }),
  };
}

async function dryRun(role: string, prices: Record<string, { prompt: number; completion: number }>) {
  const lines: string[] = [];
  const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), debug() {} };
  const runner = makeRunner([numbersStage, askStage] as Stage<unknown>[], {
    dir: tempDir(),
    yaml: `stages:\n  numbers: {count: 20}\n  ask: {role: ${role}}\n`,
    services: services(prices),
    log,
  });
  await runner.run(["ask"], { dryRun: true });
  return lines.find((l) => l.startsWith("ask: would send"))!;
}

describe("dry-run cost", () => {
  it("reads 'price unknown', naming role and model, when the model has no price", async () => {
    const line = await dryRun("strong", {});
    expect(line).toContain("would send 20 requests");
    expect(line).toContain("price unknown (no llm.prices entry for strong (unpriced-model))");
    expect(line).not.toContain("$0.00");
  });

  it("gives the dollar figure when the model has a price", async () => {
    const line = await dryRun("weak", { "gpt-3.5-turbo-x": { prompt: 1_000_000, completion: 0 } });
    expect(line).toMatch(/, ~\$\d+\.\d\d$/);
    expect(line).not.toContain("price unknown");
  });
});
