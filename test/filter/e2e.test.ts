// `pnpm pipeline run filter` end to end, in a child process, on the bundled samples and against the
// test LLM server: what is sent, what is kept, and what a rerun or a `kill -9` costs.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/index.js";
import { fileCount, filesContaining, tempDir } from "../llm/helpers.js";
import { faultRate, type LlmServer, type ReceivedRequest, startLlmServer } from "../support/llm-server.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const MAIN = new URL("../../pipeline/main.ts", import.meta.url).pathname;
const CONCURRENCY = 6;
// Every run sends this key and the server wants it; no file or line may ever show it.
const SECRET = "sk-e2e-secret-5f3a9c";
// USD per million tokens for the sample config's scorer, so that `status` has a cost to show.
const PRICE = { prompt: 1000, completion: 2000 };

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the pipeline CLI; `killWhen` is polled and, once true, the child gets SIGKILL. */
function cli(
  dataDir: string,
  args: string[],
  env: Record<string, string | undefined>,
  killWhen?: () => boolean,
): Promise<CliResult> {
  const argv = [
    "--import",
    "tsx",
    MAIN,
    ...args,
    "--config",
    "configs/sample.yaml",
    "--data-dir",
    dataDir,
    "--set",
    "hub.endpoint=file:data/sample",
    "--set",
    `llm.scorer.concurrency=${CONCURRENCY}`,
    "--set",
    `llm.prices.Qwen/Qwen-72B-Chat={prompt: ${PRICE.prompt}, completion: ${PRICE.completion}}`,
  ];
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
  };
  for (const [k, v] of Object.entries(env)) childEnv[k] = v;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, {
      cwd: ROOT,
      env: childEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.on("data", (d) => (stdout += d));
    const poll = killWhen
      ? setInterval(() => {
          if (killWhen()) {
            clearInterval(poll);
            child.kill("SIGKILL");
          }
        }, 1)
      : undefined;
    child.on("exit", (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function collect(iterable: AsyncIterable<PipelineRecord>): Promise<PipelineRecord[]> {
  const out: PipelineRecord[] = [];
  for await (const r of iterable) out.push(r);
  return out;
}

const isRound2 = (r: ReceivedRequest) => r.body.messages[0]!.content.includes("5 Points - Expert Level");

/** A stage's outputs and rejects, each sorted, as JSON lines: equal for equal outcomes. */
async function outcomeOf(dataDir: string): Promise<{ kept: string[]; rejected: string[] }> {
  const store = new StageStore(dataDir, "filter");
  return {
    kept: (await collect(store.read())).map((r) => JSON.stringify(r)).sort(),
    rejected: (await collect(store.read({ rejects: true }))).map((r) => JSON.stringify(r)).sort(),
  };
}

let server: LlmServer;
let reference: { kept: string[]; rejected: string[]; requests: number; stderr: string };
const reference_dir = tempDir("cf-filter-e2e-");
const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: SECRET });

beforeAll(async () => {
  server = await startLlmServer({ latencyMs: 15, requireKey: SECRET });
  // An uninterrupted run: what every other run must end up with.
  const run = await cli(reference_dir.path, ["run", "filter"], env());
  expect(run.code, run.stderr).toBe(0);
  reference = { ...(await outcomeOf(reference_dir.path)), requests: server.count, stderr: run.stderr };
  expect(reference.kept.length).toBeGreaterThan(0);
  expect(reference.rejected.length).toBeGreaterThan(0);
  expect(server.requests.filter(isRound2).length).toBeGreaterThan(20);
}, 120_000);

afterAll(async () => {
  await server?.close();
  reference_dir.remove();
});

describe("pnpm pipeline run filter", () => {
  it("prints the funnel, keeps survivors with both scores, and sends nothing on a rerun", async () => {
    const kept = reference.kept.map((r) => JSON.parse(r) as PipelineRecord);
    for (const r of kept) {
      expect(Object.keys(r)).toEqual(
        expect.arrayContaining(["id", "query", "answer", "resource", "lang", "complexity"]),
      );
      expect((r.complexity as { score: number }[]).map((s) => s.score >= 4)).toEqual([true, true]);
    }
    server.reset();
    const again = await cli(reference_dir.path, ["run", "filter"], env());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("filter: up to date");
    expect(server.count).toBe(0);
  });

  it("saves and prints the funnel: in, histogram per round, kept, by resource and language", async () => {
    const stats = new StageStore(reference_dir.path, "filter").manifest()!.stats as {
      in: number;
      kept: number;
      rounds: { scored: number; passed: number; histogram: Record<string, number> }[];
      by_resource: Record<string, { in: number; kept: number }>;
      by_lang: Record<string, { in: number; kept: number }>;
    };
    const total = reference.kept.length + reference.rejected.length;
    expect(stats.in).toBe(total);
    expect(stats.kept).toBe(reference.kept.length);
    const [round1, round2] = stats.rounds;
    expect(round1!.scored).toBe(total);
    expect(Object.values(round1!.histogram).reduce((a, b) => a + b, 0)).toBe(total);
    expect(round2!.scored).toBe(round1!.passed);
    expect(round2!.passed).toBe(reference.kept.length);
    const sum = (t: Record<string, { in: number; kept: number }>) =>
      Object.values(t).reduce((a, r) => ({ in: a.in + r.in, kept: a.kept + r.kept }), { in: 0, kept: 0 });
    expect(sum(stats.by_resource)).toEqual({ in: total, kept: reference.kept.length });
    expect(sum(stats.by_lang)).toEqual({ in: total, kept: reference.kept.length });
    expect(Object.keys(stats.by_resource).length).toBeGreaterThan(1);
    expect(reference.stderr).toContain(
      `funnel: ${total} in -> ${round1!.passed} pass round 1 (complexity-1)`,
    );
    expect(reference.stderr).toMatch(/round 1 complexity-1: 1: \d+ {2}2: \d+/);
    expect(reference.stderr).toContain("by resource:");
    expect(reference.stderr).toContain("by language:");
  });

  it("shows requests, tokens and estimated cost per stage in `status`", async () => {
    const usage = new StageStore(reference_dir.path, "filter").manifest()!.usage!;
    expect(usage.requests).toBe(reference.requests);
    expect(usage.promptTokens).toBeGreaterThan(0);
    const cost = (usage.promptTokens * PRICE.prompt + usage.completionTokens * PRICE.completion) / 1e6;
    expect(usage.costUsd).toBeCloseTo(cost, 6);

    const status = await cli(reference_dir.path, ["status"], env());
    expect(status.code, status.stderr).toBe(0);
    const row = (stage: string) =>
      status.stdout
        .split("\n")
        .find((l) => l.trimStart().startsWith(`${stage} `))!
        .trim()
        .split(/\s{2,}/);
    const filter = row("filter");
    expect(filter).toContain(String(reference.requests));
    expect(filter).toContain(String(usage.promptTokens + usage.completionTokens));
    expect(filter).toContain(cost.toFixed(2));
    expect(row("dedup")).not.toContain(cost.toFixed(2));
  });

  it("shows dropped records with their scores, rationales and reasons in `cat filter --rejects`", async () => {
    const cat = await cli(reference_dir.path, ["cat", "filter", "--rejects"], env());
    expect(cat.code, cat.stderr).toBe(0);
    const rejects = cat.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; reason: string; detail: string; record: PipelineRecord });
    expect(rejects.map((r) => JSON.stringify(r)).sort()).toEqual(reference.rejected);
    const low = rejects.find((r) => r.reason === "complexity-below-threshold")!;
    expect(low.detail).toMatch(/round 1 \(complexity-1\): [1-5]/);
    const scores = low.record.complexity as { score: number; rationale: string }[];
    expect(scores.some((s) => s.score < 4)).toBe(true);
    expect(scores[0]!.rationale).toMatch(/^Score: [1-5]/);
  });

  it("recomputes a forced rerun from the response cache alone, and asks again with --no-cache", async () => {
    server.reset();
    const forced = await cli(reference_dir.path, ["run", "filter", "--force", "--only"], env());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain("funnel:");
    expect(server.count).toBe(0);
    const store = new StageStore(reference_dir.path, "filter");
    expect((await outcomeOf(reference_dir.path)).kept).toEqual(reference.kept);
    expect(store.manifest()!.usage).toMatchObject({ requests: 0, cachedRequests: reference.requests });

    const fresh = await cli(reference_dir.path, ["run", "filter", "--force", "--only", "--no-cache"], env());
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(server.count).toBe(reference.requests);
    expect(store.manifest()!.usage).toMatchObject({ requests: reference.requests, cachedRequests: 0 });
    expect(await outcomeOf(reference_dir.path)).toEqual({
      kept: reference.kept,
      rejected: reference.rejected,
    });
  });

  it("without an endpoint stops after dedup with the recipe; --dry-run still estimates, from the cache", async () => {
    const dir = tempDir("cf-filter-dry-");
    const run = await cli(dir.path, ["run", "filter"], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("dedup: complete");
    expect(run.stderr).toContain("no endpoint for the LLM role 'scorer'");
    expect(run.stderr).toContain("OPENAI_BASE_URL");
    expect(run.stderr).not.toMatch(/\n\s+at /);

    server.reset();
    const dry = await cli(dir.path, ["run", "filter", "--dry-run"], env());
    expect(dry.code, dry.stderr).toBe(0);
    const records = reference.kept.length + reference.rejected.length;
    expect(dry.stderr).toMatch(new RegExp(`filter: would send \\d+ requests.*over ${records} records`));
    expect(dry.stderr).toContain("0 answers already cached");
    expect(server.count).toBe(0);

    // No endpoint, but the reference run's cache: everything is answered, nothing would be sent.
    const cache = `llm.cache.path=${join(reference_dir.path, "llm-cache.sqlite")}`;
    const offline = await cli(dir.path, ["run", "filter", "--dry-run", "--set", cache], {});
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain("filter: would send 0 requests");
    expect(offline.stderr).toContain(`${reference.requests} answers already cached`);
    dir.remove();
  });

  it("re-sends at most the requests in flight after a kill -9 in the middle of round 2", async () => {
    const dir = tempDir("cf-filter-kill-");
    server.reset();
    const killed = await cli(
      dir.path,
      ["run", "filter"],
      env(),
      () => server.requests.filter(isRound2).length >= 12,
    );
    expect(killed.signal).toBe("SIGKILL");
    // What the first run had asked for when it died; answers to most of these are in the cache.
    const firstRun = server.requests.map((r) => r.key);
    const firstKeys = new Set(firstRun);
    expect(firstRun.length).toBeLessThan(reference.requests);

    server.reset();
    const resumed = await cli(dir.path, ["run", "filter"], env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const resent = server.requests.filter((r) => firstKeys.has(r.key)).map((r) => r.key);

    expect(resent.length).toBeLessThanOrEqual(CONCURRENCY);
    // Only requests from the end of the first run can have been in flight when it was killed.
    const lastOnes = new Set(firstRun.slice(-CONCURRENCY * 2));
    for (const key of resent) expect(lastOnes.has(key)).toBe(true);

    expect(await outcomeOf(dir.path)).toEqual({ kept: reference.kept, rejected: reference.rejected });
    dir.remove();
  });

  it("loses no record to injected faults: failures are counted with their reasons and redone", async () => {
    const dir = tempDir("cf-filter-faults-");
    server.reset();
    server.options.fault = faultRate(
      0.3,
      [{ type: "status", status: 503 }, { type: "malformed" }, { type: "drop" }],
      3,
    );
    try {
      const faulty = await cli(dir.path, ["run", "filter", "--set", "llm.scorer.retries=0"], env());
      expect(faulty.code).toBe(1);
      expect(faulty.stderr).toMatch(
        /filter: \d+ records failed\b.*llm-(server-error|malformed-response|connection)/,
      );
      const manifest = new StageStore(dir.path, "filter").manifest()!;
      expect(manifest.state).toBe("partial");
      expect(manifest.counts.failed).toBeGreaterThan(0);
      expect(manifest.counts.in + manifest.counts.failed).toBe(
        reference.kept.length + reference.rejected.length,
      );
      expect(manifest.usage!.failedRequests).toBeGreaterThan(0);
    } finally {
      server.options.fault = undefined;
    }
    const resumed = await cli(dir.path, ["run", "filter", "--set", "llm.scorer.retries=0"], env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await outcomeOf(dir.path)).toEqual({ kept: reference.kept, rejected: reference.rejected });
    expect(filesContaining(dir.path, SECRET)).toEqual([]);
    dir.remove();
  });

  it("stops at once when the key is refused, and never prints it", async () => {
    const dir = tempDir("cf-filter-401-");
    server.reset();
    server.options.requireKey = "sk-the-right-key";
    const secret = "sk-wrong-key-0123456789";
    try {
      const run = await cli(dir.path, ["run", "filter"], {
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: secret,
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain("rejected the API key");
      expect(run.stderr).toContain("$OPENAI_API_KEY");
      expect(run.stderr).not.toContain(secret);
      expect(filesContaining(dir.path, secret)).toEqual([]);
      // It stopped at the first answers: no more than one request per slot was sent.
      expect(server.count).toBeLessThanOrEqual(CONCURRENCY);
    } finally {
      server.options.requireKey = SECRET;
      dir.remove();
    }
  });

  it("never writes the key: not in the cache, the manifests, the outputs or the rejects", async () => {
    // Every run above sent it (the server answers no other); the reference data dir holds the
    // cache, the manifests, the outputs and the rejects.
    expect(fileCount(reference_dir.path)).toBeGreaterThan(5);
    expect(filesContaining(reference_dir.path, SECRET)).toEqual([]);
    expect(reference.stderr).not.toContain(SECRET);
  });
});
