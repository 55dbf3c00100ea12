import { createHash } from "node:crypto";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { HubClient } from "../../pipeline/hub/client.js";
import { hubConfigSchema } from "../../pipeline/hub/config.js";
import { downloadVerified } from "../../pipeline/hub/download.js";
import {
  FileIntegrityError,
  HubAccessError,
  HubNotFoundError,
  HubUnreachableError,
} from "../../pipeline/hub/errors.js";
import { createHubFetch } from "../../pipeline/hub/fetch.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { tempDir } from "../support/temp-dir.js";

const REPO = "acme/tiny-instruct";
let root: string;
let work: string;
let bigBytes: Buffer;

function client(endpoint: string, env: NodeJS.ProcessEnv = {}) {
  const config = hubConfigSchema.parse({ endpoint, retries: 2, retry_backoff_s: 0.01, timeout_s: 5 });
  return new HubClient(config, { env });
}

beforeAll(async () => {
  root = tempDir("hub-root-");
  work = tempDir("hub-work-");
  const lines: string[] = [];
  for (let i = 0; i < 4000; i++)
    lines.push(JSON.stringify({ instruction: `task ${i} ${"x".repeat(i % 97)}`, output: `answer ${i}` }));
  bigBytes = Buffer.from(`${lines.join("\n")}\n`);
  await mkdir(path.join(root, REPO, "data"), { recursive: true });
  await writeFile(path.join(root, REPO, "data", "train-00000-of-00002.jsonl"), bigBytes);
  await writeFile(
    path.join(root, REPO, "data", "train-00001-of-00002.jsonl"),
    '{"instruction":"a","output":"b"}\n',
  );
  await writeFile(path.join(root, REPO, "README.md"), "# tiny\n");
  await writeFile(path.join(root, REPO, "data", "empty.jsonl"), "");
});

async function withHub<T>(
  options: Omit<Parameters<typeof startTestHub>[0], "root">,
  fn: (hub: TestHub) => Promise<T>,
) {
  const hub = await startTestHub({ root, ...options });
  try {
    return await fn(hub);
  } finally {
    await hub.close();
  }
}

async function fresh(name: string): Promise<string> {
  const dir = path.join(work, name);
  await rm(dir, { recursive: true, force: true });
  return path.join(dir, "file");
}

describe("hub client against the test hub", () => {
  it("resolves a branch to a commit, lists globs in order, and downloads a verified file once", async () => {
    await withHub({}, async (hub) => {
      const hubClient = client(hub.url);
      const commit = await hubClient.resolveCommit(REPO, "main");
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      const files = await hubClient.listFiles(REPO, commit, ["data/train-*.jsonl", "README.md"]);
      expect(files.map((f) => f.path)).toEqual([
        "data/train-00000-of-00002.jsonl",
        "data/train-00001-of-00002.jsonl",
        "README.md",
      ]);
      expect(files[0]!.sha256).toBe(createHash("sha256").update(bigBytes).digest("hex"));
      expect(files[2]!.gitOid).toMatch(/^[0-9a-f]{40}$/);

      const dest = await fresh("once");
      const first = await downloadVerified(hubClient, files[0]!, commit, dest);
      expect(first.fetched).toBe(true);
      expect((await readFile(dest)).equals(bigBytes)).toBe(true);
      const before = hub.requests.length;
      const second = await downloadVerified(hubClient, files[0]!, commit, dest);
      expect(second.fetched).toBe(false);
      expect(hub.requests.length).toBe(before);

      // an empty file is a file too
      const [empty] = await hubClient.listFiles(REPO, commit, ["data/empty.jsonl"]);
      const emptyCopy = await downloadVerified(hubClient, empty!, commit, await fresh("empty"));
      expect((await readFile(emptyCopy.localPath)).length).toBe(0);

      // a plain git file (not LFS) is verified by its git blob id
      const readme = await downloadVerified(hubClient, files[2]!, commit, await fresh("readme"));
      expect(readme.gitOid).toBe(files[2]!.gitOid);
    });
  });

  it("talks to $HF_ENDPOINT unless the config names an endpoint, and keeps a pinned commit", async () => {
    await withHub({}, async (hub) => {
      const config = hubConfigSchema.parse({ retries: 0, timeout_s: 5 });
      const viaEnv = new HubClient(config, { env: { HF_ENDPOINT: `${hub.url}/` } });
      const commit = await viaEnv.resolveCommit(REPO, "main");
      expect(viaEnv.endpoint).toBe(hub.url);
      expect(hub.requests.length).toBeGreaterThan(0);
      // a pinned commit resolves to itself, and a commit the dataset does not have is an error
      await expect(viaEnv.resolveCommit(REPO, commit)).resolves.toBe(commit);
      const elsewhere = hubConfigSchema.parse({ endpoint: "http://127.0.0.1:9", retries: 0, timeout_s: 5 });
      const overridden = new HubClient(elsewhere, { env: { HF_ENDPOINT: hub.url } });
      expect(overridden.endpoint).toBe("http://127.0.0.1:9");
    });
  });

  it("continues a download dropped mid-file with a Range request from where it stopped", async () => {
    await withHub(
      { faults: [{ kind: "drop", afterBytes: 50_000, match: "/resolve/", times: 2 }] },
      async (hub) => {
        const hubClient = client(hub.url);
        const commit = await hubClient.resolveCommit(REPO, "main");
        const [file] = await hubClient.listFiles(REPO, commit, ["data/train-00000-of-00002.jsonl"]);
        const dest = await fresh("dropped");
        await downloadVerified(hubClient, file!, commit, dest);
        expect((await readFile(dest)).equals(bigBytes)).toBe(true);
        const ranges = hub.requests.filter((r) => r.url.includes("/resolve/")).map((r) => r.range);
        // the probe and body of the first attempt, then a body from the dropped offset
        expect(ranges.some((r) => r !== undefined && /^bytes=[1-9]\d*-/.test(r))).toBe(true);
      },
    );
  });

  it("resumes from a .part left by an interrupted run instead of starting over", async () => {
    await withHub({}, async (hub) => {
      const hubClient = client(hub.url);
      const commit = await hubClient.resolveCommit(REPO, "main");
      const [file] = await hubClient.listFiles(REPO, commit, ["data/train-00000-of-00002.jsonl"]);
      const dest = await fresh("interrupted");
      await mkdir(path.dirname(dest), { recursive: true });
      await writeFile(`${dest}.part`, bigBytes.subarray(0, 123_457));
      await downloadVerified(hubClient, file!, commit, dest);
      expect((await readFile(dest)).equals(bigBytes)).toBe(true);
      const bodyRanges = hub.requests.filter((r) => r.range && r.range !== "bytes=0-0").map((r) => r.range);
      expect(bodyRanges).toEqual([`bytes=123457-${bigBytes.length - 1}`]);
      await expect(stat(`${dest}.part`)).rejects.toThrow();
    });
  });

  it("verifies a complete part or an unnoted file left by a killed run without fetching it again", async () => {
    await withHub({}, async (hub) => {
      const hubClient = client(hub.url);
      const commit = await hubClient.resolveCommit(REPO, "main");
      const [file] = await hubClient.listFiles(REPO, commit, ["data/train-00000-of-00002.jsonl"]);
      const bodies = () => hub.requests.filter((r) => r.url.includes("/resolve/") && r.range !== "bytes=0-0");

      // killed after the last byte, before the part was verified and renamed
      const dest = await fresh("complete-part");
      await mkdir(path.dirname(dest), { recursive: true });
      await writeFile(`${dest}.part`, bigBytes);
      const fromPart = await downloadVerified(hubClient, file!, commit, dest);
      expect(fromPart.fetched).toBe(false);
      expect((await readFile(dest)).equals(bigBytes)).toBe(true);
      expect(JSON.parse(await readFile(`${dest}.verified`, "utf8"))).toMatchObject({
        commit,
        size: file!.size,
      });

      // killed after the rename, before the note was written
      await rm(`${dest}.verified`);
      const unnoted = await downloadVerified(hubClient, file!, commit, dest);
      expect(unnoted.fetched).toBe(false);
      await expect(stat(`${dest}.verified`)).resolves.toBeDefined();
      expect(bodies()).toEqual([]);

      // a file in place that does not match is fetched again, not trusted
      await rm(`${dest}.verified`);
      await writeFile(dest, Buffer.alloc(bigBytes.length, 0x20));
      const replaced = await downloadVerified(hubClient, file!, commit, dest);
      expect(replaced.fetched).toBe(true);
      expect((await readFile(dest)).equals(bigBytes)).toBe(true);
    });
  });

  it("checks a file against its ETag when the listing gives no hash (as some mirrors do)", async () => {
    await withHub({ faults: [{ kind: "corrupt", match: /resolve.*train-00000/, times: 4 }] }, async (hub) => {
      const hubClient = client(hub.url);
      const commit = await hubClient.resolveCommit(REPO, "main");
      const bare = { repo: REPO, path: "data/train-00000-of-00002.jsonl", size: bigBytes.length };
      const error = await downloadVerified(hubClient, bare, commit, await fresh("bare")).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FileIntegrityError);
      expect((error as Error).message).toMatch(/data\/train-00000-of-00002\.jsonl.*sha256/);
      expect(hub.faults).toEqual([]);
    });
  });

  it("refetches a corrupted file once, and names the file when it stays corrupt", async () => {
    await withHub({ faults: [{ kind: "corrupt", match: "train-00000", times: 2 }] }, async (hub) => {
      const hubClient = client(hub.url);
      const commit = await hubClient.resolveCommit(REPO, "main");
      const [file] = await hubClient.listFiles(REPO, commit, ["data/train-00000-of-00002.jsonl"]);
      // the first fault hits the 1-byte probe (harmless); the second corrupts the body
      const dest = await fresh("corrupt-once");
      await downloadVerified(hubClient, file!, commit, dest);
      expect((await readFile(dest)).equals(bigBytes)).toBe(true);
    });
    await withHub({ faults: [{ kind: "corrupt", match: "train-00000" }] }, async (hub) => {
      const hubClient = client(hub.url);
      const commit = await hubClient.resolveCommit(REPO, "main");
      const [file] = await hubClient.listFiles(REPO, commit, ["data/train-00000-of-00002.jsonl"]);
      const dest = await fresh("corrupt-always");
      const error = await downloadVerified(hubClient, file!, commit, dest).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileIntegrityError);
      expect((error as Error).message).toContain("data/train-00000-of-00002.jsonl");
      expect((error as Error).message).toContain("sha256");
      await expect(stat(dest)).rejects.toThrow();
    });
  });

  it("explains 401: without a token it says which variable to set", async () => {
    await withHub({ token: "hf_secret" }, async (hub) => {
      const error = await client(hub.url)
        .resolveCommit(REPO, "main")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubAccessError);
      expect((error as Error).message).toMatch(/set \$HF_TOKEN/);
      const wrong = await client(hub.url, { HF_TOKEN: "hf_wrong" })
        .resolveCommit(REPO, "main")
        .catch((e: unknown) => e);
      expect((wrong as Error).message).toMatch(/check that the token in \$HF_TOKEN/);
      await expect(client(hub.url, { HF_TOKEN: "hf_secret" }).resolveCommit(REPO, "main")).resolves.toMatch(
        /^[0-9a-f]{40}$/,
      );
    });
  });

  it("explains 404 for a missing dataset, revision and file", async () => {
    await withHub({}, async (hub) => {
      const hubClient = client(hub.url);
      await expect(hubClient.resolveCommit("acme/missing", "main")).rejects.toThrow(HubNotFoundError);
      await expect(hubClient.resolveCommit(REPO, "0".repeat(40))).rejects.toThrow(/revision/);
      const commit = await hubClient.resolveCommit(REPO, "main");
      const error = await hubClient.listFiles(REPO, commit, ["data/test-*.jsonl"]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubNotFoundError);
      expect((error as Error).message).toContain("data/test-*.jsonl");
      expect((error as Error).message).toContain("data/train-00000-of-00002.jsonl");
      const ghost = { repo: REPO, path: "data/ghost.jsonl", size: 3 };
      await expect(downloadVerified(hubClient, ghost, commit, await fresh("ghost"))).rejects.toThrow(
        /data\/ghost\.jsonl.*not found/,
      );
    });
  });

  it("retries 5xx and succeeds when the hub recovers", async () => {
    await withHub(
      { faults: [{ kind: "status", status: 503, match: "/revision/", times: 2 }] },
      async (hub) => {
        await expect(client(hub.url).resolveCommit(REPO, "main")).resolves.toMatch(/^[0-9a-f]{40}$/);
        expect(hub.requests.filter((r) => r.url.includes("/revision/")).length).toBe(3);
      },
    );
  });

  it("sends the token to the configured endpoint and to no other host", async () => {
    await withHub({ token: "hf_secret" }, async (hub) => {
      const path = `/api/datasets/${REPO}/revision/main`;
      const options = { token: "hf_secret", timeoutMs: 5000, retries: 0, backoffMs: 0 };
      const own = createHubFetch({ ...options, base: hub.url });
      expect((await own(`${hub.url}${path}`)).status).toBe(200);
      // same host and port prefix, different port: not the endpoint
      const other = createHubFetch({ ...options, base: hub.url.slice(0, -1) });
      expect((await other(`${hub.url}${path}`)).status).toBe(401);
    });
  });

  it("says the hub is unreachable when nothing listens", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const error = await client(`http://127.0.0.1:${port}`)
      .resolveCommit(REPO, "main")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubUnreachableError);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect((error as Error).message).toMatch(/HF_ENDPOINT/);
  });

  it("serves a local directory as a hub through the same client (file: endpoint)", async () => {
    const hubClient = client(`file:${root}`);
    const commit = await hubClient.resolveCommit(REPO, "main");
    const [file] = await hubClient.listFiles(REPO, commit, ["data/*-00000-*.jsonl"]);
    const dest = await fresh("local");
    await downloadVerified(hubClient, file!, commit, dest);
    expect((await readFile(dest)).equals(bigBytes)).toBe(true);
  });
});
