// `kill -9` through the CLI against the test hub, once in the middle of a download and once in the
// middle of normalize: the rerun continues the partial file from its length (no byte asked for twice)
// and normalize's resumed output is exactly the uninterrupted one, in order, each row once.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Reject } from "../../pipeline/record.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { tempDir } from "../support/temp-dir.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ROWS = 20_000;
/** rows planted as bad input, by position */
const MALFORMED = new Set([7, 9_999, 18_234]);
const EMPTY_ANSWER = new Set([123, 15_000]);

let dir: string;
let hub: TestHub;
let source: Buffer;

function instruction(i: number): string {
  return `Task ${i}: write a function that ${"combines the inputs carefully ".repeat(8 + (i % 17))}`;
}

beforeAll(async () => {
  dir = tempDir("ingest-crash-");
  const lines: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    if (MALFORMED.has(i)) lines.push(`{"instruction": "cut short ${i}`);
    else {
      const response = EMPTY_ANSWER.has(i) ? "" : `\`\`\`python\ndef f_${i}(x):\n    return x * ${i}\n\`\`\``;
      lines.push(JSON.stringify({ instruction: instruction(i), response }));
    }
  }
  source = Buffer.from(`${lines.join("\n")}\n`);
  await mkdir(path.join(dir, "hub", "acme", "instruct"), { recursive: true });
  await writeFile(path.join(dir, "hub", "acme", "instruct", "data.jsonl"), source);
  // the first body of the file trickles out, so the client can be killed while it is on the way
  hub = await startTestHub({
    root: path.join(dir, "hub"),
    faults: [{ kind: "slow", bytesPerSecond: 2_000_000, match: /\/resolve\/.*data\.jsonl/, times: 2 }],
  });
  await writeFile(
    path.join(dir, "config.yaml"),
    [
      `data_dir: ${path.join(dir, "data")}`,
      "hub:",
      "  retry_backoff_s: 0.01",
      "stages:",
      "  download:",
      "    sources:",
      "      - {name: wiz, adapter: wizardcoder, repo: acme/instruct, files: [data.jsonl]}",
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  await hub?.close();
});

function start(...args: string[]): { child: ChildProcess; exit: Promise<number | null> } {
  // node itself, not the tsx launcher, so that SIGKILL reaches the process doing the work
  const argv = ["--import", "tsx", "pipeline/main.ts", ...args, "--config", path.join(dir, "config.yaml")];
  const child = spawn(process.execPath, argv, {
    cwd: repoRoot,
    // the endpoint as a mirror is set for the whole process, through the environment
    env: { ...process.env, HF_ENDPOINT: hub.url, HF_TOKEN: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      if (code !== 0 && code !== null) process.stderr.write(stderr);
      resolve(code);
    }),
  );
  return { child, exit };
}

async function sizeOf(file: string): Promise<number> {
  return (await stat(file).catch(() => undefined))?.size ?? 0;
}

/** Kills the process with SIGKILL as soon as `file` holds more than `bytes` bytes. */
async function killWhenGrown(
  run: ReturnType<typeof start>,
  file: () => Promise<string | undefined>,
  bytes: number,
) {
  let exited: { code: number | null } | undefined;
  void run.exit.then((code) => {
    exited = { code };
  });
  for (;;) {
    const found = await file();
    if (found && (await sizeOf(found)) > bytes) break;
    if (exited) throw new Error(`the run ended (exit code ${exited.code}) before it could be killed`);
    await new Promise((r) => setTimeout(r, 10));
  }
  run.child.kill("SIGKILL");
  expect(await run.exit).toBeNull();
}

async function findPart(root: string): Promise<string | undefined> {
  const entries = await readdir(root, { recursive: true }).catch(() => [] as string[]);
  const part = entries.find((e) => e.endsWith("data.jsonl.part"));
  return part === undefined ? undefined : path.join(root, part);
}

describe("kill -9 during ingest", () => {
  it("continues a killed download from the part's length and a killed normalize where it stopped", async () => {
    const dataDir = path.join(dir, "data");
    const work = path.join(dataDir, "download", "work");

    // 1. killed while the file is on the way
    await killWhenGrown(start("run", "download"), () => findPart(work), 200_000);
    const part = (await findPart(work))!;
    const kept = await sizeOf(part);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(source.length);
    const before = hub.requests.length;

    // 2. the rerun finishes the download with one Range request from the part's length, then is
    //    killed once normalize has committed its first rows
    const normalizeParts = path.join(dataDir, "normalize", "parts");
    await killWhenGrown(
      start("run", "normalize"),
      async () => path.join(normalizeParts, "part-00000.jsonl"),
      0,
    );
    const bodies = hub.requests
      .slice(before)
      .filter((r) => r.url.includes("/resolve/") && r.range !== "bytes=0-0");
    expect(bodies.map((r) => r.range)).toEqual([`bytes=${kept}-${source.length - 1}`]);
    const file = part.replace(/\.part$/, "");
    expect((await readFile(file)).equals(source)).toBe(true);
    const store = new StageStore(dataDir, "normalize");
    const scan = await store.scan();
    expect(scan.counts.in).toBeLessThan(ROWS); // the kill landed mid-stage

    // 3. the rerun resumes normalize (a second part, the first kept) and completes it
    const last = start("run", "normalize");
    expect(await last.exit).toBe(0);
    expect(store.parts().length).toBeGreaterThanOrEqual(2);
    expect(
      hub.requests.slice(before).filter((r) => r.url.includes("/resolve/") && r.range !== "bytes=0-0"),
    ).toHaveLength(1);

    const expectedIds: string[] = [];
    const expectedRejects: Array<[string, string]> = [];
    for (let i = 0; i < ROWS; i++) {
      const id = `wiz:${String(i).padStart(6, "0")}`;
      if (MALFORMED.has(i)) expectedRejects.push([id, "malformed-json"]);
      else if (EMPTY_ANSWER.has(i)) expectedRejects.push([id, "empty-answer"]);
      else expectedIds.push(id);
    }
    const ids: string[] = [];
    for await (const record of store.read()) {
      const i = Number(record.id.slice(4));
      expect(record.query).toBe(instruction(i));
      ids.push(record.id);
    }
    expect(ids).toEqual(expectedIds);
    const rejects: Array<[string, string]> = [];
    for await (const r of store.read({ rejects: true })) {
      const reject = r as unknown as Reject;
      rejects.push([reject.id, reject.reason]);
    }
    expect(rejects).toEqual(expectedRejects);
    // the summary of a resumed run counts the outputs and rejects of both runs
    const byReason: Record<string, number> = {};
    for (const [, reason] of expectedRejects) byReason[reason] = (byReason[reason] ?? 0) + 1;
    expect(store.manifest()!.stats).toEqual({
      by_resource: { wizardcoder: expectedIds.length },
      by_lang: { python: expectedIds.length },
      rejected: byReason,
    });
  });
});
