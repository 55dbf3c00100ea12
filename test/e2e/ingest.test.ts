// `pnpm pipeline run dedup` on the bundled samples, through the CLI and the local test hub over HTTP:
// the expected records come out, bad rows and duplicates are rejected with their reasons, a dropped
// connection is survived, a rerun is a no-op, and a forced rerun fetches nothing twice. Outputs are
// read from the data directory, and through `cat` once, to keep the number of CLI starts low.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { type CliResult, onSamples, runCli } from "../support/cli.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { tempDir } from "../support/temp-dir.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
let hub: TestHub;
let dataDir: string;

beforeAll(async () => {
  hub = await startTestHub({
    root: path.join(repoRoot, "data", "sample"),
    token: "hf_e2e_token",
    latencyMs: 2,
    // the first body request of each JSON file is cut after 1 KB: the download must continue from there
    faults: [
      {
        kind: "drop",
        afterBytes: 1024,
        match: /resolve\/[0-9a-f]{40}\/EvolInstruct-Code-80k\.json/,
        times: 2,
      },
      {
        kind: "drop",
        afterBytes: 1024,
        match: /resolve\/[0-9a-f]{40}\/Python-Code-23k-ShareGPT\.json/,
        times: 2,
      },
    ],
  });
  dataDir = tempDir("ingest-e2e-");
});

afterAll(async () => {
  await hub?.close();
});

/** The CLI on the samples through the test hub, with the token the hub expects unless told otherwise. */
function pipeline(args: string[], token = "hf_e2e_token"): Promise<CliResult> {
  const argv = [...args, ...onSamples(dataDir, [`hub.endpoint=${hub.url}`, "hub.retry_backoff_s=0.01"])];
  return runCli(argv, { env: { HF_TOKEN: token, HF_ENDPOINT: "" } });
}

async function stored(stage: string, rejects = false): Promise<Array<Record<string, unknown>>> {
  const out: PipelineRecord[] = [];
  for await (const record of new StageStore(dataDir, stage).read({ rejects })) out.push(record);
  return out;
}

function jsonl(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("ingest end to end on the samples through the test hub", () => {
  it("downloads, normalizes and deduplicates into the expected records", async () => {
    const run = await pipeline(["run", "dedup"]);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);

    const files = await stored("download");
    expect(files.map((f) => f.id).sort()).toEqual([
      "BAAI/TACO/ALL/test-00000-of-00001.parquet",
      "BAAI/TACO/ALL/train-00000-of-00001.parquet",
      "ajibawa-2023/Python-Code-23k-ShareGPT/Python-Code-23k-ShareGPT.json",
      "ise-uiuc/Magicoder-Evol-Instruct-110K/data-evol_instruct-decontaminated.jsonl",
      "ise-uiuc/Magicoder-OSS-Instruct-75K/data-oss_instruct-decontaminated.jsonl",
      "nickrosh/Evol-Instruct-Code-80k-v1/EvolInstruct-Code-80k.json",
    ]);
    for (const file of files) {
      expect(file.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    // the manifest keeps the commit each source's revision resolved to, in config order
    const pinned = new StageStore(dataDir, "download").manifest()!.stats!.sources as Record<
      string,
      { repo: string; revision: string; commit: string }
    >;
    expect(Object.keys(pinned)).toEqual(["magicoder", "sharegpt", "wizardcoder", "evolinstruct", "taco"]);
    for (const file of files) {
      expect(pinned[file.source as string]).toMatchObject({
        repo: file.repo,
        revision: "main",
        commit: file.commit,
      });
    }
    // the dropped transfers were continued with a Range from where they stopped
    expect(
      hub.requests.some(
        (r) => r.url.includes("EvolInstruct-Code-80k.json") && /^bytes=1024-/.test(r.range ?? ""),
      ),
    ).toBe(true);

    const seeds = await stored("normalize");
    expect(seeds).toHaveLength(117);
    expect(new Set(seeds.map((s) => s.resource))).toEqual(
      new Set(["magicoder", "sharegpt", "wizardcoder", "evolinstruct"]),
    );
    expect(seeds.find((s) => s.id === "magicoder:000001")).toMatchObject({
      resource: "magicoder",
      lang: "cpp",
    });
    expect(seeds.find((s) => s.id === "evolinstruct:000009")).toMatchObject({ lang: "python" });
    expect(seeds.filter((s) => s.resource === "sharegpt").every((s) => s.lang === "python")).toBe(true);
    expect(seeds.every((s) => typeof s.query === "string" && typeof s.answer === "string")).toBe(true);

    const summary = new StageStore(dataDir, "normalize").manifest()!.stats as {
      by_resource: Record<string, number>;
      by_lang: Record<string, number>;
    };
    expect(summary.by_resource).toEqual({ magicoder: 30, sharegpt: 29, wizardcoder: 29, evolinstruct: 29 });
    const langs: Record<string, number> = {};
    for (const s of seeds) langs[s.lang as string] = (langs[s.lang as string] ?? 0) + 1;
    expect(summary.by_lang).toEqual(langs);

    const badRows = await stored("normalize", true);
    expect(badRows.map((r) => [r.id, r.reason])).toEqual([
      ["sharegpt:000029", "no-user-assistant-pair"],
      ["wizardcoder:000028", "empty-answer"],
      ["evolinstruct:000029", "missing-field"],
    ]);

    const kept = await stored("dedup");
    expect(kept).toHaveLength(112);
    const dropped = jsonl((await pipeline(["cat", "dedup", "--rejects"])).stdout);
    expect(dropped.map((r) => [r.id, r.reason])).toEqual([
      ["wizardcoder:000010", "exact-duplicate"],
      ["wizardcoder:000020", "near-duplicate"],
      ["wizardcoder:000025", "benchmark-contamination"],
      ["evolinstruct:000005", "exact-duplicate"],
      ["evolinstruct:000012", "benchmark-contamination"],
    ]);
    expect(dropped[0]!.detail).toContain("magicoder:000007");
    expect(dropped[1]!.detail).toContain("wizardcoder:000004");
    expect(dropped[2]!.detail).toContain("mbpp item 14");
    expect(dropped[3]!.detail).toContain("sharegpt:000002");
    expect(dropped[4]!.detail).toContain("HumanEval/3");
    // the summary's tally, in the order the reasons came, is the runner's count of the rejects
    const dedup = new StageStore(dataDir, "dedup").manifest()!;
    const tally = { "exact-duplicate": 2, "near-duplicate": 1, "benchmark-contamination": 2 };
    expect(Object.entries(dedup.stats!.dropped as object)).toEqual(Object.entries(tally));
    expect(dedup.rejectReasons).toEqual(tally);
    const keptIds = new Set(kept.map((r) => r.id));
    for (const survivor of ["magicoder:000007", "wizardcoder:000004", "sharegpt:000002"]) {
      expect(keptIds.has(survivor)).toBe(true);
    }
  });

  it("does nothing on a rerun, and status shows the counts", async () => {
    const before = hub.requests.length;
    const rerun = await pipeline(["run", "dedup"]);
    expect(rerun.code).toBe(0);
    for (const stage of ["download", "normalize", "dedup"])
      expect(rerun.stderr).toContain(`${stage}: up to date`);
    expect(hub.requests.slice(before)).toEqual([]);
    const status = await pipeline(["status"]);
    expect(status.stdout).toMatch(/^download\s+complete\s+5\s+6\s+0\s+0\s/m);
    expect(status.stdout).toMatch(/^normalize\s+complete\s+120\s+117\s+3\s+0\s/m);
    expect(status.stdout).toMatch(/^dedup\s+complete\s+117\s+112\s+5\s+0\s/m);
  });

  it("fetches no file twice when download is forced to run again", async () => {
    const before = hub.requests.length;
    const rerun = await pipeline(["run", "download", "--force"]);
    expect(rerun.code).toBe(0);
    const fresh = hub.requests.slice(before);
    expect(fresh.length).toBeGreaterThan(0); // revisions were resolved and files listed again
    expect(fresh.filter((r) => r.url.includes("/resolve/"))).toEqual([]);
  });

  it("stops with advice when the token is wrong", async () => {
    const result = await pipeline(["run", "download", "--force"], "hf_wrong");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/refused access.*HF_TOKEN/s);
  });
});
