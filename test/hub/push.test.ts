// pushDirectory against the local test hub speaking the hub's real commit endpoints: what lands on the
// hub, what a rerun sends (nothing), and what an interrupted push sends when it is run again (only
// what the hub lacks), interrupted mid-upload and between an upload and its commit.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InterruptedError, UserError } from "../../pipeline/errors.js";
import { hubConfigSchema } from "../../pipeline/hub/config.js";
import { type PushOptions, pushDirectory } from "../../pipeline/hub/push.js";
import { PushError, PushTokenError } from "../../pipeline/hub/push-errors.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { tempDir } from "../support/temp-dir.js";
import { type ExportFixture, LARGE, SMALL, sha256, writeExportFixture } from "./push-fixtures.js";

const TOKEN = "hf_push_test_token_7c1e";
const ENV = { HF_TOKEN: TOKEN };
let scratch: string;
let hub: TestHub;
let fixture: ExportFixture;

const hubConfig = (overrides: Record<string, unknown> = {}) =>
  hubConfigSchema.parse({
    endpoint: hub.url,
    retries: 0,
    retry_backoff_s: 0.01,
    timeout_s: 20,
    ...overrides,
  });

/** Pushes the fixture to acme/cf on the test hub with the token, `options` on top. */
const push = (options: Partial<PushOptions> = {}) =>
  pushDirectory({ dir: fixture.dir, repo: "acme/cf", hub: hubConfig(), env: ENV, ...options });

/** Request body bytes the hub received for uploads (PUT), from request index `from` on. */
function uploadedBytes(from = 0, oid?: string): number {
  return hub.requests
    .slice(from)
    .filter((r) => r.method === "PUT" && (!oid || r.url.includes(oid)))
    .reduce((n, r) => n + r.bytesIn, 0);
}

async function remoteBytes(repo: string, file: string, revision = "main"): Promise<Buffer> {
  const res = await fetch(`${hub.url}/datasets/${repo}/resolve/${revision}/${file}`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

beforeEach(async () => {
  scratch = tempDir("cf-push-");
  hub = await startTestHub({ root: path.join(scratch, "hub"), writable: path.join(scratch, "hub-storage") });
  fixture = await writeExportFixture(path.join(scratch, "data"));
});

afterEach(async () => {
  await hub.close();
});

describe("push", () => {
  it("creates the repository private, commits each large file alone and the small ones last, and the hub serves the same bytes", async () => {
    const result = await push({ private: true });

    expect(result.createdRepo).toBe(true);
    expect(hub.writes!.repos.get("acme/cf")).toMatchObject({ type: "dataset", private: true });
    expect(result.uploaded).toEqual([...LARGE, ...SMALL].sort());
    expect(hub.writes!.commits.map((c) => c.files)).toEqual([
      ...LARGE.map((f) => [{ path: f, kind: "lfs" }]),
      SMALL.map((f) => ({ path: f, kind: "inline" })),
    ]);
    for (const [name, bytes] of Object.entries(fixture.files)) {
      expect((await remoteBytes("acme/cf", name)).equals(bytes)).toBe(true);
    }
    // the stage's bookkeeping stays home
    const tree = (await (await fetch(`${hub.url}/api/datasets/acme/cf/tree/main?recursive=true`)).json()) as {
      path: string;
    }[];
    expect(tree.map((e) => e.path).sort()).toEqual([...LARGE, ...SMALL].sort());
    // each large file crossed the wire once, through LFS
    for (const name of LARGE)
      expect(uploadedBytes(0, sha256(fixture.files[name]!))).toBe(fixture.files[name]!.length);
  });

  it("sends nothing and commits nothing when the branch already holds every file", async () => {
    await push();
    const before = hub.requests.length;
    const commits = hub.writes!.commits.length;

    const again = await push();

    expect(again.uploaded).toEqual([]);
    expect(again.unchanged).toEqual([...LARGE, ...SMALL].sort());
    expect(hub.writes!.commits.length).toBe(commits);
    expect(hub.requests.slice(before).every((r) => r.method === "GET")).toBe(true);
  });

  it("after a connection cut mid-upload, the rerun sends only the files the hub lacks", async () => {
    const [first, cutFile, third] = LARGE as [string, string, string];
    const cutOid = sha256(fixture.files[cutFile]!);
    hub.faults.push({ kind: "cut-upload", afterBytes: 400_000, match: `/lfs-upload/${cutOid}`, times: 1 });

    const failed = push();
    await expect(failed).rejects.toBeInstanceOf(PushError);
    await expect(failed).rejects.toThrow(/rerun the same command/);
    expect(hub.writes!.commits.map((c) => c.files.map((f) => f.path))).toEqual([[first]]);
    const cutSent = uploadedBytes(0, cutOid);
    expect(cutSent).toBeGreaterThanOrEqual(400_000);
    expect(cutSent).toBeLessThan(fixture.files[cutFile]!.length);

    const mark = hub.requests.length;
    const resumed = await push();

    expect(resumed.unchanged).toEqual([first]);
    expect(resumed.uploaded).toEqual([cutFile, third, ...SMALL].sort());
    // exactly the two missing large files crossed the wire again; the committed one not a byte
    expect(uploadedBytes(mark)).toBe(fixture.files[cutFile]!.length + fixture.files[third]!.length);
    expect(uploadedBytes(mark, sha256(fixture.files[first]!))).toBe(0);
    const later = hub.writes!.commits.slice(1).flatMap((c) => c.files.map((f) => f.path));
    expect(later).not.toContain(first);
    for (const [name, bytes] of Object.entries(fixture.files)) {
      expect((await remoteBytes("acme/cf", name)).equals(bytes)).toBe(true);
    }
  });

  it("after a commit refused once its upload had landed, the rerun does not send those bytes again", async () => {
    const [first, second, third] = LARGE as [string, string, string];
    hub.faults.push({ kind: "status", status: 503, match: "/commit/main", times: 1 });

    await expect(push()).rejects.toThrow(/HTTP 503.*rerun the same command/);
    expect(hub.writes!.commits).toEqual([]);
    expect(await hub.writes!.hasObject(sha256(fixture.files[first]!))).toBe(true);

    const mark = hub.requests.length;
    const resumed = await push();

    expect(resumed.uploaded).toContain(first);
    // the LFS batch said the hub holds it: the commit names it, no byte of it is sent
    expect(uploadedBytes(mark, sha256(fixture.files[first]!))).toBe(0);
    expect(uploadedBytes(mark)).toBe(fixture.files[second]!.length + fixture.files[third]!.length);
    expect(hub.writes!.commits[0]!.files).toEqual([{ path: first, kind: "lfs" }]);
    expect((await remoteBytes("acme/cf", first)).equals(fixture.files[first]!)).toBe(true);
  });

  it("a changed file is the only one sent again", async () => {
    await push();
    const card = Buffer.from("# Code-Feedback (reproduction)\n\nNow with 4,200 dialogues and a report.\n");
    await writeFile(path.join(fixture.dir, "README.md"), card);
    const mark = hub.requests.length;

    const result = await push();

    expect(result.uploaded).toEqual(["README.md"]);
    expect(uploadedBytes(mark)).toBe(0);
    expect(hub.writes!.commits.at(-1)!.files).toEqual([{ path: "README.md", kind: "inline" }]);
    expect((await remoteBytes("acme/cf", "README.md")).equals(card)).toBe(true);
  });

  it("--revision creates the branch from main and commits there, leaving main as it was", async () => {
    await push();
    const card = Buffer.from("# Code-Feedback, second run\n");
    await writeFile(path.join(fixture.dir, "README.md"), card);

    const result = await push({ revision: "run-2" });

    expect(result.createdBranch).toBe(true);
    expect(result.uploaded).toEqual(["README.md"]);
    expect(hub.writes!.commits.at(-1)).toMatchObject({ branch: "run-2" });
    expect((await remoteBytes("acme/cf", "README.md", "run-2")).equals(card)).toBe(true);
    expect((await remoteBytes("acme/cf", "README.md", "main")).equals(fixture.files["README.md"]!)).toBe(
      true,
    );
    expect((await remoteBytes("acme/cf", LARGE[0]!, "run-2")).equals(fixture.files[LARGE[0]!]!)).toBe(true);
  });

  it("an existing repository is reused, and --private does not change it", async () => {
    await push();
    const warnings: string[] = [];
    const log = { info() {}, debug() {}, warn: (m: string) => warnings.push(m) };
    const result = await push({ private: true, log });
    expect(result.createdRepo).toBe(false);
    expect(hub.writes!.repos.get("acme/cf")?.private).toBe(false);
    expect(warnings.join("\n")).toMatch(/already exists; --private applies only when creating it/);
  });

  it("an abort stops the push as an interruption that a rerun finishes", async () => {
    const controller = new AbortController();
    const log = {
      info: (m: string) => {
        if (m.includes("committed")) controller.abort();
      },
      warn() {},
      debug() {},
    };
    await expect(push({ log, signal: controller.signal })).rejects.toBeInstanceOf(InterruptedError);
    expect(hub.writes!.commits).toHaveLength(1);
    const result = await push();
    expect(result.unchanged).toEqual([LARGE[0]]);
  });
});

describe("push refuses with advice", () => {
  it("without a token, before any request", async () => {
    await expect(push({ env: {} })).rejects.toThrow(PushTokenError);
    await expect(push({ env: {} })).rejects.toThrow(
      /no token in \$HF_TOKEN; a push needs one with write access to acme/,
    );
    expect(hub.requests).toEqual([]);
  });

  it("when the hub refuses the token, without ever showing it", async () => {
    await hub.close();
    hub = await startTestHub({
      root: path.join(scratch, "hub"),
      writable: path.join(scratch, "hub-storage"),
      token: "hf_the_right_one",
    });
    const error = await push().catch((e) => e);
    expect(error).toBeInstanceOf(PushError);
    expect(error.message).toMatch(/HTTP 401.*set \$HF_TOKEN to a token with write access to acme/);
    expect(error.message).not.toContain(TOKEN);
  });

  it("for a file: endpoint, a bad repository name, an empty directory, or a file export did not write", async () => {
    const file = hubConfigSchema.parse({ endpoint: "file:data/sample" });
    await expect(push({ hub: file })).rejects.toThrow(/read-only local directory/);
    await expect(push({ repo: "cf" })).rejects.toThrow(/pass --repo OWNER\/NAME/);
    const empty = await mkdtemp(path.join(scratch, "empty-"));
    await expect(push({ dir: empty })).rejects.toThrow(
      /no files to push; run `pnpm pipeline run export` first/,
    );
    const expect2 = new Map([["README.md", sha256(Buffer.from("something else"))]]);
    await expect(push({ expect: expect2 })).rejects.toThrow(UserError);
    expect(hub.requests).toEqual([]);
    expect((await readFile(path.join(fixture.dir, "README.md"))).equals(fixture.files["README.md"]!)).toBe(
      true,
    );
  });
});
