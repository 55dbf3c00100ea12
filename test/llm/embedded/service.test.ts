// The embedded provider through the LLM service, as stages use it: a tiny random-weight GGUF fetched
// from the test hub, loaded by node-llama-cpp, answering under sampling, seeds, grammars and JSON
// schemas, with the response cache, usage, estimates, interruption and failures of the HTTP roles.
import { statSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import type { UserError } from "../../../pipeline/errors.js";
import { llmConfigSchema } from "../../../pipeline/llm/config.js";
import {
  chooseProvider,
  LlmAbortedError,
  LlmRequestError,
  ModelUnavailableError,
} from "../../../pipeline/llm/index.js";
import { UsageMeter } from "../../../pipeline/usage.js";
import { SCORE_OPTIONS } from "../../../stages/filter/complexity.js";
import { parseComplexityScore } from "../../../stages/filter/score-parser.js";
import { tempDir } from "../../support/temp-dir.js";
import { ask, recordingLogger } from "../helpers.js";
import { embeddedConfig, embeddedService, FILE, fileTransfers, REPO, useTinyModelHub } from "./kit.js";

const model = useTinyModelHub();
let dir: string;
beforeEach(() => {
  dir = tempDir("cf-embedded-");
});

describe("which provider a role resolves to", () => {
  it("auto: the endpoint when one is configured, the embedded model otherwise; provider forces", () => {
    const auto = llmConfigSchema.parse({});
    expect(chooseProvider(auto, "scorer", {}).provider).toBe("embedded");
    expect(chooseProvider(auto, "scorer", {}).model).toBe(
      "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf@main",
    );
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:8000/v1" };
    expect(chooseProvider(auto, "scorer", env)).toMatchObject({
      provider: "openai",
      model: "Qwen/Qwen-72B-Chat",
    });
    const yaml = llmConfigSchema.parse({ weak: { base_url: "http://127.0.0.1:1/v1" } });
    expect(chooseProvider(yaml, "weak", {}).provider).toBe("openai");
    expect(chooseProvider(yaml, "strong", {}).provider).toBe("embedded");
    // a blank variable is no endpoint
    expect(chooseProvider(auto, "scorer", { OPENAI_BASE_URL: "  " }).provider).toBe("embedded");
    const forced = llmConfigSchema.parse({
      scorer: { provider: "embedded" },
      weak: { provider: "openai" },
    });
    expect(chooseProvider(forced, "scorer", env)).toMatchObject({ provider: "embedded", forced: true });
    expect(chooseProvider(forced, "weak", {})).toMatchObject({ provider: "openai", forced: true });
    const local = llmConfigSchema.parse({ scorer: { embedded: { path: "/models/my.gguf" } } });
    expect(chooseProvider(local, "scorer", {}).model).toBe("gguf:my.gguf");
  });
});

describe("the embedded provider", () => {
  it("fetches the GGUF once through the hub, verified, and answers with token counts", async () => {
    const log = recordingLogger();
    const service = embeddedService(embeddedConfig(model.embedded()), dir, { log });
    const usage = new UsageMeter();
    const client = service.client("scorer", usage);
    expect(client.model).toBe(`${REPO}/${FILE}@main`);
    const before = fileTransfers(model.hub);
    const answer = await client.chat(ask("Write a function that reverses a list."));
    expect(fileTransfers(model.hub)).toBe(before + 1);
    expect(answer.cached).toBe(false);
    expect(answer.model).toBe(`${REPO}/${FILE}@main`);
    expect(typeof answer.content).toBe("string");
    // the chat template wraps the question: more tokens than the text alone has characters / 4
    expect(answer.usage.promptTokens).toBeGreaterThan(10);
    expect(answer.usage.completionTokens).toBeGreaterThan(0);
    expect(answer.usage.completionTokens).toBeLessThanOrEqual(12);
    expect(usage.totals).toMatchObject({
      requests: 1,
      cachedRequests: 0,
      failedRequests: 0,
      promptTokens: answer.usage.promptTokens,
      completionTokens: answer.usage.completionTokens,
      costUsd: 0,
    });
    expect(log.lines.some((l) => l.includes("embedded model") && l.includes("on cpu"))).toBe(true);
    await service.close();

    // Another run (a new process, the same data dir): the verified copy is used, nothing fetched.
    const again = embeddedService(embeddedConfig(model.embedded()), dir);
    await again.client("scorer", new UsageMeter()).chat(ask("Sort a dictionary by value."));
    expect(fileTransfers(model.hub)).toBe(before + 1);
    await again.close();

    // Pinned to the commit: not even the hub's listing is asked for.
    const asked = model.hub.requests.length;
    const pinned = embeddedService(embeddedConfig(model.embedded({ revision: model.commit })), dir);
    // (a new revision is a new directory: fetched once there, then never asked again)
    await pinned.client("scorer", new UsageMeter()).chat(ask("Parse a date."));
    await pinned.close();
    const afterFetch = model.hub.requests.length;
    expect(afterFetch).toBeGreaterThan(asked);
    const offlinePinned = embeddedService(embeddedConfig(model.embedded({ revision: model.commit })), dir);
    await offlinePinned.client("scorer", new UsageMeter()).chat(ask("Merge two lists."));
    await offlinePinned.close();
    expect(model.hub.requests.length).toBe(afterFetch);
  });

  it("answers a rerun from the cache without loading the model, and --no-cache generates again", async () => {
    const config = embeddedConfig(model.embedded());
    const first = embeddedService(config, dir);
    const original = await first.client("scorer", new UsageMeter()).chat(ask("Explain recursion."));
    await first.close();

    const asked = model.hub.requests.length;
    // The hub is not even consulted: a cached answer needs no model.
    const rerun = embeddedService(
      embeddedConfig(model.embedded({ hub_endpoint: "http://127.0.0.1:1" })),
      dir,
    );
    const usage = new UsageMeter();
    const replay = await rerun.client("scorer", usage).chat(ask("Explain recursion."));
    expect(replay).toMatchObject({ cached: true, content: original.content, usage: original.usage });
    expect(usage.totals).toMatchObject({ requests: 0, cachedRequests: 1 });
    expect(model.hub.requests.length).toBe(asked);
    await rerun.close();

    const fresh = embeddedService(config, dir, { noCache: true });
    const regenerated = await fresh.client("scorer", new UsageMeter()).chat(ask("Explain recursion."));
    expect(regenerated.cached).toBe(false);
    // temperature 0: the same model gives the same answer
    expect(regenerated.content).toBe(original.content);
    await fresh.close();
  });

  it("samples with seeds: the same seed repeats an answer, other seeds vary it", async () => {
    const config = embeddedConfig(model.embedded(), {
      sampling: { temperature: 1.2, top_p: 0.95, max_tokens: 12 },
    });
    const service = embeddedService(config, dir, { noCache: true });
    const client = service.client("scorer", new UsageMeter());
    const question = ask("Name a sorting algorithm.");
    const a = await client.chat(question, { seed: 1 });
    const b = await client.chat(question, { seed: 1 });
    expect(b.content).toBe(a.content);
    const others = new Set<string>();
    for (const seed of [2, 3, 4, 5]) others.add((await client.chat(question, { seed })).content);
    others.add(a.content);
    expect(others.size).toBeGreaterThan(1);
    await service.close();
  });

  it("constrains answers so they always parse: the filter's score grammar and a JSON schema", async () => {
    const config = embeddedConfig(model.embedded(), {
      sampling: { temperature: 1, max_tokens: 16 },
    });
    const service = embeddedService(config, dir);
    const client = service.client("scorer", new UsageMeter());
    const scored: string[] = [];
    for (let seed = 0; seed < 12; seed++) {
      const answer = await client.chat(ask(`Rate query number ${seed}.`), { ...SCORE_OPTIONS, seed });
      expect(parseComplexityScore(answer.content)?.score, JSON.stringify(answer.content)).toBe(
        Number(answer.content[0]),
      );
      scored.push(answer.content);
    }
    // some went on to explain (free text after the score), and still parsed
    expect(scored.some((a) => a.length > 3)).toBe(true);
    const schema = {
      name: "feedback",
      schema: {
        type: "object",
        properties: {
          category: { enum: ["syntax", "logic", "style"] },
          fixed: { type: "boolean" },
        },
        required: ["category", "fixed"],
        additionalProperties: false,
      },
    };
    for (let seed = 0; seed < 6; seed++) {
      const answer = await client.chat(ask("Give feedback."), { json_schema: schema, seed, max_tokens: 64 });
      expect(answer.finishReason).toBe("stop");
      const value = JSON.parse(answer.content) as { category: string; fixed: boolean };
      expect(["syntax", "logic", "style"]).toContain(value.category);
      expect(typeof value.fixed).toBe("boolean");
    }
    // The constraint is part of the key: the same question without it is a different request.
    const estimator = service.estimator("scorer");
    expect(estimator.estimate(ask("Rate query number 0."), { ...SCORE_OPTIONS, seed: 0 }).cached).toBe(true);
    expect(estimator.estimate(ask("Rate query number 0."), { seed: 0 }).cached).toBe(false);
    await service.close();
  });

  it("runs requests in parallel sequences of one context, each answer cached once", async () => {
    const service = embeddedService(embeddedConfig(model.embedded({ sequences: 3 })), dir);
    const usage = new UsageMeter();
    const client = service.client("scorer", usage);
    const questions = Array.from({ length: 9 }, (_, i) => ask(`Question ${i}: write a loop.`));
    // each question twice at once: identical requests in flight are generated once
    const answers = await Promise.all([...questions, ...questions].map((q) => client.chat(q)));
    expect(answers.every((a) => typeof a.content === "string")).toBe(true);
    expect(usage.totals.requests).toBe(9);
    expect(usage.totals.cachedRequests).toBe(9);
    for (let i = 0; i < 9; i++) expect(answers[i + 9]!.content).toBe(answers[i]!.content);
    const estimator = service.estimator("scorer");
    expect(questions.every((q) => estimator.estimate(q).cached)).toBe(true);
    await service.close();
  });

  it("stops generating when interrupted: the call rejects as interrupted, nothing is cached", async () => {
    const config = embeddedConfig(model.embedded({ context_size: 2048 }), {
      sampling: { temperature: 1, max_tokens: 1800 },
    });
    const service = embeddedService(config, dir);
    const client = service.client("scorer", new UsageMeter());
    await client.chat(ask("warm up"), { max_tokens: 2 });
    const controller = new AbortController();
    // a grammar that never lets the answer end: it runs until stopped or max_tokens
    const endless = { grammar: "root ::= [a-z] root", seed: 9 };
    const pending = client.chat(ask("Write a long essay."), { ...endless, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toBeInstanceOf(LlmAbortedError);
    expect(service.estimator("scorer").estimate(ask("Write a long essay."), endless).cached).toBe(false);
    // the sequence is free again
    const after = await client.chat(ask("Still there?"), { max_tokens: 4 });
    expect(after.cached).toBe(false);
    await service.close();
  });

  it("refuses a prompt longer than the context (a failed request, never a cut question)", async () => {
    const service = embeddedService(embeddedConfig(model.embedded({ context_size: 128 })), dir);
    const usage = new UsageMeter();
    const error = await service
      .client("scorer", usage)
      .chat(ask("word ".repeat(400)))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).last.kind).toBe("bad-request");
    expect((error as Error).message).toMatch(/context holds \d+/);
    expect(usage.totals).toMatchObject({ requests: 1, failedRequests: 1 });
    await service.close();
  });

  it("loads a local GGUF file without the hub, and names a missing one", async () => {
    const config = embeddedConfig({ path: model.localFile, sequences: 1, context_size: 256, threads: 1 });
    const asked = model.hub.requests.length;
    const service = embeddedService(config, dir);
    const client = service.client("scorer", new UsageMeter());
    expect(client.model).toBe(`gguf:${FILE}`);
    expect((await client.chat(ask("hello"))).usage.completionTokens).toBeGreaterThan(0);
    expect(model.hub.requests.length).toBe(asked);
    await service.close();

    const missing = embeddedService(embeddedConfig({ path: `${dir}/nowhere.gguf` }), dir);
    const error = await missing
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).message).toContain(`${dir}/nowhere.gguf`);
    await missing.close();
  });

  it("offline without the file: stops with where to put it and how to use a server instead (exit 2)", async () => {
    const service = embeddedService(
      embeddedConfig(model.embedded({ hub_endpoint: "http://127.0.0.1:1" })),
      dir,
    );
    const client = service.client("scorer", new UsageMeter());
    const error = await client.chat(ask("hello")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as UserError).exitCode).toBe(2);
    const message = (error as Error).message;
    for (const advice of [
      "no endpoint for the LLM role 'scorer'",
      `${dir}/models/${REPO}/main/${FILE}`,
      "llm.scorer.embedded.path",
      "HF_ENDPOINT",
      "llm.scorer.embedded.hub_endpoint",
      "cannot reach the hub at http://127.0.0.1:1",
      "OPENAI_BASE_URL",
    ]) {
      expect(message).toContain(advice);
    }
    // the model's mirror is its own setting: the datasets' hub.endpoint is not advised
    expect(message).not.toContain("(or hub.endpoint)");
    // every later request fails the same way at once, without asking the hub again
    const asked = model.hub.requests.length;
    await expect(client.chat(ask("again"))).rejects.toBe(error);
    expect(model.hub.requests.length).toBe(asked);
    expect(statSync(dir).isDirectory()).toBe(true);
    await service.close();
  });

  it("asks the hub once for a model it does not have, however many requests are queued", async () => {
    const service = embeddedService(
      embeddedConfig(model.embedded({ repo: "test-org/no-such-model-GGUF" })),
      dir,
    );
    const client = service.client("scorer", new UsageMeter());
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => client.chat(ask(`question ${i}`))),
    );
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(ModelUnavailableError);
    }
    const asked = model.hub.requests.filter((r) => r.url.includes("no-such-model")).length;
    expect(asked).toBe(1);
    expect(((settled[0] as PromiseRejectedResult).reason as Error).message).toContain(
      "test-org/no-such-model-GGUF",
    );
    await service.close();
  });

  it("estimates a dry-run with the embedded model's name as the key, offline", async () => {
    const config = embeddedConfig(model.embedded());
    const service = embeddedService(config, dir);
    await service.client("scorer", new UsageMeter()).chat(ask("cached question"));
    await service.close();
    const offline = embeddedService(
      embeddedConfig(model.embedded({ hub_endpoint: "http://127.0.0.1:1" })),
      dir,
    );
    const estimator = offline.estimator("scorer");
    expect(estimator.model).toBe(`${REPO}/${FILE}@main`);
    expect(estimator.estimate(ask("cached question")).cached).toBe(true);
    expect(estimator.peek(ask("cached question"))?.model).toBe(`${REPO}/${FILE}@main`);
    const e = estimator.estimate(ask("a new question"), { expectedCompletionTokens: 5 });
    expect(e).toMatchObject({ cached: false, completionTokens: 5, costUsd: 0 });
    expect(e.promptTokens).toBeGreaterThan(0);
    expect(offline.describeRoles()[0]).toMatch(
      new RegExp(
        `llm role scorer: embedded \\(node-llama-cpp\\), model ${REPO}/${FILE}@main, GGUF .*on this machine`,
      ),
    );
    await offline.close();
  });
});
