// The filter's dry-run estimate, its fingerprint, what a changed prompt costs, and its funnel.
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { filterConfigSchema } from "../../stages/filter/config.js";
import { filterStage, openFilter } from "../../stages/filter.js";
import { serverPerTest } from "../llm/helpers.js";
import { fakeRun, llmConfig, record, scripted } from "./helpers.js";

const t = serverPerTest({}, "cf-filter-");

describe("filter: dry-run, fingerprint, funnel", () => {
  it("estimates requests and tokens before any spend, and counts what is cached", async () => {
    t.server.options.fallback = scripted({ q0: { r1: "5", r2: "5" }, q1: { r1: "2" } });
    const input = Array.from({ length: 10 }, (_, i) => record(`r${i}`, `q${i}`));
    const llm = llmConfig(t.server.url);
    const run = fakeRun({ dataDir: t.dir, llm, input });
    const before = await filterStage.estimate!(run.ctx as never, run.ctx.read("dedup"));
    expect(before.requests).toBe(10 + Math.round(10 * 0.665));
    expect(before.promptTokens).toBeGreaterThan(10 * 100);
    expect(before.completionTokens).toBe(Math.round((10 + 10 * 0.665) * 120));
    expect(t.server.count).toBe(0);

    await run.processAll(input.slice(0, 2));
    const after = await filterStage.estimate!(run.ctx as never, run.ctx.read("dedup"));
    // q0 and q1 are fully answered (q1 stopped at round 1): 8 records left, 8 x 1.665 requests.
    expect(after.requests).toBe(Math.round(8 + 8 * 0.665));
    expect(after.note).toContain("3 answers already cached");
    await run.close();

    // Without an endpoint the cache still answers for what was asked: same model, prompts, sampling.
    const unconfigured = fakeRun({ dataDir: t.dir, llm: llmConfig(undefined), input });
    const offline = await filterStage.estimate!(unconfigured.ctx as never, unconfigured.ctx.read("dedup"));
    expect(offline).toEqual(after);
    await unconfigured.close();

    // --no-cache would ask everything again.
    const fresh = fakeRun({ dataDir: t.dir, llm: llmConfig(undefined), input, noCache: true });
    const again = await filterStage.estimate!(fresh.ctx as never, fresh.ctx.read("dedup"));
    expect(again.requests).toBe(before.requests);
    expect(again.note).toContain("0 answers already cached");
    await fresh.close();
    expect(t.server.count).toBe(3);
  });

  it("changes its fingerprint with the model, the sampling and the prompt texts", () => {
    const config = filterConfigSchema.parse({});
    const root = (llm: ReturnType<typeof llmConfig>) => ({ llm }) as never;
    const base = JSON.stringify(
      filterStage.fingerprint!({ config, root: root(llmConfig("http://x/v1")), limit: undefined }),
    );
    const other = (scorer: Record<string, unknown>) =>
      JSON.stringify(
        filterStage.fingerprint!({ config, root: root(llmConfig("http://x/v1", scorer)), limit: undefined }),
      );
    expect(other({ model: "another" })).not.toBe(base);
    expect(other({ sampling: { temperature: 0.2 } })).not.toBe(base);
    // The endpoint itself is not part of it: moving the same model to another server changes nothing.
    expect(
      JSON.stringify(
        filterStage.fingerprint!({ config, root: root(llmConfig("http://y/v1")), limit: undefined }),
      ),
    ).toBe(base);
    expect(base).toContain("Please give the score first then explain why");
  });

  it("asks again when a prompt's text changes: the prompt is part of the cache key", async () => {
    const input = [record("a", "same query")];
    const original = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input });
    await original.processAll();
    const sent = t.server.count;
    await original.close();
    expect(sent).toBeGreaterThan(0);

    // The same prompt again: all from the cache.
    const same = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input });
    await same.processAll();
    await same.close();
    expect(t.server.count).toBe(sent);

    // One word changed in the round-1 prompt: a new request, and the record's rationale is the new one.
    const edited = `${t.dir}/complexity-1-edited.md`;
    const text = readFileSync(new URL("../../prompts/complexity-1.md", import.meta.url), "utf8");
    writeFileSync(edited, text.replace("Consider the complexity", "Consider carefully the complexity"));
    const changed = fakeRun({
      dataDir: t.dir,
      llm: llmConfig(t.server.url),
      filter: { rounds: [edited] },
      input,
    });
    await changed.processAll();
    await changed.close();
    expect(t.server.count).toBe(sent + 1);
    expect(t.server.requests.at(-1)!.body.messages[0]!.content).toContain(
      "Consider carefully the complexity",
    );
  });

  it("summarizes the funnel: in, histogram per round, kept, by resource and language", async () => {
    t.server.options.fallback = scripted({
      a: { r1: "5", r2: "4" },
      b: { r1: "4", r2: "2" },
      c: { r1: "1" },
      d: { r1: "??", r1again: "no idea" },
    });
    const input = [
      record("1", "a"),
      record("2", "b", { lang: "cpp" }),
      record("3", "c", { resource: "oss" }),
      record("4", "d", { resource: "oss", lang: "cpp" }),
    ];
    const run = fakeRun({ dataDir: t.dir, llm: llmConfig(t.server.url), input });
    await run.processAll();
    const stats = (await filterStage.summarize!(run.ctx, openFilter(run.ctx), {
      counters: {},
      rejectReasons: {},
    })) as Record<string, unknown>;
    expect(stats).toMatchObject({
      in: 4,
      kept: 1,
      rejected: { "complexity-below-threshold": 2, unscored: 1 },
      rounds: [
        {
          round: 1,
          prompt: "complexity-1",
          scored: 4,
          passed: 2,
          histogram: { "1": 1, "4": 1, "5": 1, unscored: 1 },
        },
        { round: 2, prompt: "complexity-2", scored: 2, passed: 1, histogram: { "2": 1, "4": 1 } },
      ],
      by_resource: { evolinstruct: { in: 2, kept: 1 }, oss: { in: 2, kept: 0 } },
      by_lang: { python: { in: 2, kept: 1 }, cpp: { in: 2, kept: 0 } },
    });
    const printed = run.log.lines.join("\n");
    expect(printed).toContain(
      "funnel: 4 in -> 2 pass round 1 (complexity-1) -> 1 pass round 2 (complexity-2); kept 1",
    );
    expect(printed).toContain("by language: python 1/2");
    await run.close();
  });

  it("keeps as many records in flight as twice the scorer's concurrency", () => {
    const ctx = {
      config: filterConfigSchema.parse({}),
      root: { llm: llmConfig("http://x/v1", { concurrency: 64 }) },
    };
    expect(filterStage.kind === "record" && filterStage.concurrency!(ctx as never)).toBe(128);
  });
});
