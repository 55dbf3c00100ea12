// `pnpm pipeline run filter` end to end, in a child process, on the bundled samples and against the
// test LLM server: what is sent, what is kept, and what a rerun or a `kill -9` costs.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/index.js";
import { tempDir } from "../llm/helpers.js";
import { faultRate, type LlmServer, type ReceivedRequest, startLlmServer } from "../support/llm-server.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const MAIN = new URL("../../pipeline/main.ts", import.meta.url).pathname;
const CONCURRENCY = 6;

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
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
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.resume();
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
      resolve({ code, signal, stderr });
    });
  });
}

async function collect(iterable: AsyncIterable<PipelineRecord>): Promise<PipelineRecord[]> {
  const out: PipelineRecord[] = [];
  for await (const r of iterable) out.push(r);
  return out;
}

const isRound2 = (r: ReceivedRequest) => r.body.messages[0]!.content.includes("5 Points - Expert Level");

let server: LlmServer;
let reference: { kept: string[]; rejected: string[]; requests: number };
const reference_dir = tempDir("cf-filter-e2e-");
const env = () => ({ OPENAI_BASE_URL: server.url });

beforeAll(async () => {
  server = await startLlmServer({ latencyMs: 15 });
  // An uninterrupted run: what every other run must end up with.
  const run = await cli(reference_dir.path, ["run", "filter"], env());
  expect(run.code, run.stderr).toBe(0);
  const store = new StageStore(reference_dir.path, "filter");
  reference = {
    kept: (await collect(store.read())).map((r) => JSON.stringify(r)).sort(),
    rejected: (await collect(store.read({ rejects: true }))).map((r) => JSON.stringify(r)).sort(),
    requests: server.count,
  };
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

  it("recomputes a forced rerun from the response cache alone, with the same outcome", async () => {
    server.reset();
    const forced = await cli(reference_dir.path, ["run", "filter", "--force", "--only"], env());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain("funnel:");
    expect(server.count).toBe(0);
    const store = new StageStore(reference_dir.path, "filter");
    expect((await collect(store.read())).map((r) => JSON.stringify(r)).sort()).toEqual(reference.kept);
    expect(store.manifest()!.usage).toMatchObject({ requests: 0, cachedRequests: reference.requests });
  });

  it("estimates a run before any spend with --dry-run", async () => {
    const dir = tempDir("cf-filter-dry-");
    server.reset();
    const dry = await cli(dir.path, ["run", "filter", "--dry-run"], env());
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/filter: would send \d+ requests/);
    expect(server.count).toBe(0);
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

    const store = new StageStore(dir.path, "filter");
    expect((await collect(store.read())).map((r) => JSON.stringify(r)).sort()).toEqual(reference.kept);
    expect((await collect(store.read({ rejects: true }))).map((r) => JSON.stringify(r)).sort()).toEqual(
      reference.rejected,
    );
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
        /filter: \d+ records failed \(.*llm-(server-error|malformed-response|connection)/,
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
    const store = new StageStore(dir.path, "filter");
    expect((await collect(store.read())).map((r) => JSON.stringify(r)).sort()).toEqual(reference.kept);
    expect((await collect(store.read({ rejects: true }))).map((r) => JSON.stringify(r)).sort()).toEqual(
      reference.rejected,
    );
    dir.remove();
  });

  it("stops after dedup with the recipe when no endpoint is configured", async () => {
    const dir = tempDir("cf-filter-noenv-");
    const run = await cli(dir.path, ["run", "filter"], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("dedup: complete");
    expect(run.stderr).toContain("no endpoint for the LLM role 'scorer'");
    expect(run.stderr).toContain("OPENAI_BASE_URL");
    expect(run.stderr).not.toMatch(/\n\s+at /);
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
      expect(run.stderr).not.toContain(secret);
      // It stopped at the first answers: no more than one request per slot was sent.
      expect(server.count).toBeLessThanOrEqual(CONCURRENCY);
    } finally {
      server.options.requireKey = undefined;
      dir.remove();
    }
  });
});
