// `pnpm pipeline run filter` end to end, in a child process, on the bundled samples and against the
// test LLM server: what is kept and printed, what `status` and `cat` show, what a rerun sends, and
// that the key is never written anywhere. Resuming after faults and kill -9: filter-resume.test.ts.
import { describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { fileCount, filesContaining } from "../llm/helpers.js";
import { onSamples, runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";
import { CONCURRENCY, cli, outcomeOf, PRICE, SECRET, useReferenceRun } from "./kit.js";

const ref = useReferenceRun("cf-filter-e2e-");

describe("pnpm pipeline run filter", () => {
  it("prints the funnel, keeps survivors with both scores, and sends nothing on a rerun", async () => {
    const kept = ref.reference.kept.map((r) => JSON.parse(r) as PipelineRecord);
    for (const r of kept) {
      expect(Object.keys(r)).toEqual(
        expect.arrayContaining(["id", "query", "answer", "resource", "lang", "complexity"]),
      );
      expect((r.complexity as { score: number }[]).map((s) => s.score >= 4)).toEqual([true, true]);
    }
    ref.server.reset();
    const again = await cli(ref.dir, ["run", "filter"], ref.env());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("filter: up to date");
    expect(ref.server.count).toBe(0);
  });

  it("saves and prints the funnel: in, histogram per round, kept, by resource and language", async () => {
    const stats = new StageStore(ref.dir, "filter").manifest()!.stats as {
      in: number;
      kept: number;
      rounds: { scored: number; passed: number; histogram: Record<string, number> }[];
      by_resource: Record<string, { in: number; kept: number }>;
      by_lang: Record<string, { in: number; kept: number }>;
    };
    const total = ref.reference.kept.length + ref.reference.rejected.length;
    expect(stats.in).toBe(total);
    expect(stats.kept).toBe(ref.reference.kept.length);
    const [round1, round2] = stats.rounds;
    expect(round1!.scored).toBe(total);
    expect(Object.values(round1!.histogram).reduce((a, b) => a + b, 0)).toBe(total);
    expect(round2!.scored).toBe(round1!.passed);
    expect(round2!.passed).toBe(ref.reference.kept.length);
    const sum = (t: Record<string, { in: number; kept: number }>) =>
      Object.values(t).reduce((a, r) => ({ in: a.in + r.in, kept: a.kept + r.kept }), { in: 0, kept: 0 });
    expect(sum(stats.by_resource)).toEqual({ in: total, kept: ref.reference.kept.length });
    expect(sum(stats.by_lang)).toEqual({ in: total, kept: ref.reference.kept.length });
    expect(Object.keys(stats.by_resource).length).toBeGreaterThan(1);
    expect(ref.reference.stderr).toContain(
      `funnel: ${total} in -> ${round1!.passed} pass round 1 (complexity-1)`,
    );
    expect(ref.reference.stderr).toMatch(/round 1 complexity-1: 1: \d+ {2}2: \d+/);
    expect(ref.reference.stderr).toContain("by resource:");
    expect(ref.reference.stderr).toContain("by language:");
  });

  it("shows requests, tokens and estimated cost per stage in `status`", async () => {
    const usage = new StageStore(ref.dir, "filter").manifest()!.usage!;
    expect(usage.requests).toBe(ref.reference.requests);
    expect(usage.promptTokens).toBeGreaterThan(0);
    const cost = (usage.promptTokens * PRICE.prompt + usage.completionTokens * PRICE.completion) / 1e6;
    expect(usage.costUsd).toBeCloseTo(cost, 6);

    const status = await cli(ref.dir, ["status"], ref.env());
    expect(status.code, status.stderr).toBe(0);
    const row = (stage: string) =>
      status.stdout
        .split("\n")
        .find((l) => l.trimStart().startsWith(`${stage} `))!
        .trim()
        .split(/\s{2,}/);
    const filter = row("filter");
    expect(filter).toContain(String(ref.reference.requests));
    expect(filter).toContain(String(usage.promptTokens + usage.completionTokens));
    expect(filter).toContain(cost.toFixed(2));
    expect(row("dedup")).not.toContain(cost.toFixed(2));
  });

  it("names what changed when filter is stale: run with an endpoint, read without it", async () => {
    // the README's way: the endpoint in the environment, the role on `provider: auto`
    const withEndpoint = await runCli(
      ["status", "--stage", "filter", ...onSamples(ref.dir, ["llm.scorer.provider=auto"])],
      { env: ref.env() },
    );
    expect(withEndpoint.stdout).toMatch(/state: +complete/);
    const without = await runCli(
      ["status", "--stage", "filter", ...onSamples(ref.dir, ["llm.scorer.provider=auto"])],
      { env: { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined } },
    );
    expect(without.code, without.stderr).toBe(0);
    // no endpoint: the embedded model would answer, and status says so rather than "its configuration changed"
    expect(without.stdout).toMatch(
      /reason: +its configuration changed: model "Qwen\/Qwen-72B-Chat" -> "[^"]+", .*provider unset -> "embedded"/,
    );
  });

  it("shows dropped records with their scores, rationales and reasons in `cat filter --rejects`", async () => {
    const cat = await cli(ref.dir, ["cat", "filter", "--rejects"], ref.env());
    expect(cat.code, cat.stderr).toBe(0);
    const rejects = cat.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; reason: string; detail: string; record: PipelineRecord });
    expect(rejects.map((r) => JSON.stringify(r)).sort()).toEqual(ref.reference.rejected);
    const low = rejects.find((r) => r.reason === "complexity-below-threshold")!;
    expect(low.detail).toMatch(/round 1 \(complexity-1\): [1-5]/);
    const scores = low.record.complexity as { score: number; rationale: string }[];
    expect(scores.some((s) => s.score < 4)).toBe(true);
    expect(scores[0]!.rationale).toMatch(/^Score: [1-5]/);
  });

  it("recomputes a forced rerun from the response cache alone, and asks again with --no-cache", async () => {
    ref.server.reset();
    const forced = await cli(ref.dir, ["run", "filter", "--force", "--only"], ref.env());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain("funnel:");
    expect(ref.server.count).toBe(0);
    const store = new StageStore(ref.dir, "filter");
    expect((await outcomeOf(ref.dir)).kept).toEqual(ref.reference.kept);
    expect(store.manifest()!.usage).toMatchObject({ requests: 0, cachedRequests: ref.reference.requests });

    const fresh = await cli(ref.dir, ["run", "filter", "--force", "--only", "--no-cache"], ref.env());
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(ref.server.count).toBe(ref.reference.requests);
    expect(store.manifest()!.usage).toMatchObject({ requests: ref.reference.requests, cachedRequests: 0 });
    expect(await outcomeOf(ref.dir)).toEqual({
      kept: ref.reference.kept,
      rejected: ref.reference.rejected,
    });
  });

  it("stops at once when the key is refused, and never prints it", async () => {
    const dir = tempDir("cf-filter-401-");
    ref.server.reset();
    ref.server.options.requireKey = "sk-the-right-key";
    const secret = "sk-wrong-key-0123456789";
    try {
      const run = await cli(dir, ["run", "filter"], {
        OPENAI_BASE_URL: ref.server.url,
        OPENAI_API_KEY: secret,
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain("rejected the API key");
      expect(run.stderr).toContain("$OPENAI_API_KEY");
      expect(run.stderr).not.toContain(secret);
      expect(filesContaining(dir, secret)).toEqual([]);
      // It stopped at the first answers: no more than one request per slot was sent.
      expect(ref.server.count).toBeLessThanOrEqual(CONCURRENCY);
    } finally {
      ref.server.options.requireKey = SECRET;
    }
  });

  it("never writes the key: not in the cache, the manifests, the outputs or the rejects", async () => {
    // Every run above sent it (the server answers no other); the reference data dir holds the
    // cache, the manifests, the outputs and the rejects.
    expect(fileCount(ref.dir)).toBeGreaterThan(5);
    expect(filesContaining(ref.dir, SECRET)).toEqual([]);
    expect(ref.reference.stderr).not.toContain(SECRET);
  });
});
