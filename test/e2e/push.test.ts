// `pnpm pipeline push` as a user runs it, in a child process against the local test hub: the files
// the release stage listed (and the report) are pushed from its directory, the stage's bookkeeping
// is not, the token never shows, a rerun sends nothing; and the real CLI refuses an export that is
// missing or out of date. The toy pipeline's release stage is `bundle` (test/support/toy-release.ts):
// push finds the release where the stage that declares it keeps it.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { exportFixtureFiles, LARGE, SMALL, sha256, writeExportFixture } from "../hub/push-fixtures.js";
import { MAIN, onSamples, runCli } from "../support/cli.js";
import { startTestHub, type TestHub } from "../support/hub-server.js";
import { filesBelow } from "../support/hub-writes.js";
import { tempDir } from "../support/temp-dir.js";

const TOY_CLI = new URL("../support/toy-release-cli.ts", import.meta.url).pathname;
const TOKEN = "hf_cli_push_secret_93b1";

let scratch: string;
let hub: TestHub;

/** The CLI at `entry`, without this process's hub token and endpoint unless `env` sets them. */
function cli(
  entry: string,
  args: string[],
  env: Record<string, string | undefined>,
  killWhen?: () => boolean,
) {
  return runCli(args, { entry, env: { HF_TOKEN: undefined, HF_ENDPOINT: undefined, ...env }, killWhen });
}

/** Runs the toy release stage into `dataDir` (config at `config`): its files, and its directory. */
async function release(dataDir: string, config: string, hubRetries?: number) {
  const retries = hubRetries === undefined ? "" : `, retries: ${hubRetries}`;
  await writeFile(config, `data_dir: ${dataDir}\nhub: {endpoint: "${hub.url}"${retries}}\n`);
  const run = await cli(TOY_CLI, ["run", "bundle", "--config", config], {});
  expect(run.code, run.stderr).toBe(0);
  return { dir: path.join(dataDir, "bundle"), files: exportFixtureFiles() };
}

beforeEach(async () => {
  scratch = tempDir("cf-push-cli-");
  hub = await startTestHub({ root: path.join(scratch, "hub"), writable: path.join(scratch, "storage") });
});

afterEach(async () => {
  await hub.close();
});

describe("pnpm pipeline push", () => {
  it("pushes what the release stage wrote and the report, to a private repo on a branch; a rerun sends nothing", async () => {
    const dataDir = path.join(scratch, "data");
    const config = path.join(scratch, "c.yaml");
    const fixture = await release(dataDir, config, 0);
    // a file the stage did not list is not part of the release
    await writeFile(path.join(fixture.dir, "notes.txt"), "scratch notes\n");
    const args = [
      "push",
      "--config",
      config,
      "--repo",
      "acme/code-feedback",
      "--private",
      "--revision",
      "release",
    ];

    const first = await cli(TOY_CLI, args, { HF_TOKEN: TOKEN });

    expect(first.stderr).not.toContain(TOKEN);
    expect(first.stdout).not.toContain(TOKEN);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /acme\/code-feedback@release: 5 file\(s\) sent in 4 commit\(s\), 0 already there/,
    );
    expect(hub.writes!.repos.get("acme/code-feedback")?.private).toBe(true);
    expect(
      await filesBelow(path.join(scratch, "storage", "branches", "release", "acme", "code-feedback")),
    ).toEqual(Object.keys(fixture.files).sort());

    const again = await cli(TOY_CLI, args, { HF_TOKEN: TOKEN });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/0 file\(s\) sent in 0 commit\(s\), 5 already there/);
    expect(hub.writes!.commits).toHaveLength(4);
  });

  it("killed with SIGKILL mid-upload, the rerun sends only what the hub does not hold", async () => {
    const dataDir = path.join(scratch, "data");
    const config = path.join(scratch, "c.yaml");
    const fixture = await release(dataDir, config, 0);
    const args = ["push", "--config", config, "--repo", "acme/cf"];
    const [first, second, third] = LARGE as [string, string, string];
    const oid = (name: string) => sha256(fixture.files[name]!);
    const putBytes = (from: number, name?: string) =>
      hub.requests
        .slice(from)
        .filter((r) => r.method === "PUT" && (!name || r.url.includes(oid(name))))
        .reduce((n, r) => n + r.bytesIn, 0);
    // the second file's upload crawls, so the kill lands in the middle of it
    hub.faults.push({ kind: "slow-upload", bytesPerSecond: 400_000, match: oid(second), times: 1 });

    const killed = await cli(TOY_CLI, args, { HF_TOKEN: TOKEN }, () => putBytes(0, second) >= 300_000);

    expect(killed.code).toBeNull();
    expect(hub.writes!.commits.map((c) => c.files.map((f) => f.path))).toEqual([[first]]);
    expect(putBytes(0, second)).toBeLessThan(fixture.files[second]!.length);
    expect(await hub.writes!.hasObject(oid(second))).toBe(false);

    const mark = hub.requests.length;
    const resumed = await cli(TOY_CLI, args, { HF_TOKEN: TOKEN });

    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`already on main, not sent: ${first.replace(".", "\\.")}`));
    expect(putBytes(mark)).toBe(fixture.files[second]!.length + fixture.files[third]!.length);
    expect(putBytes(mark, first)).toBe(0);
    expect(await filesBelow(path.join(scratch, "hub", "acme", "cf"))).toEqual([...LARGE, ...SMALL].sort());
  });

  it("without a token: says where to set one, sends nothing", async () => {
    const dataDir = path.join(scratch, "data");
    const config = path.join(scratch, "c.yaml");
    await release(dataDir, config);
    const run = await cli(TOY_CLI, ["push", "--config", config, "--repo", "acme/cf"], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no token in \$HF_TOKEN/);
    expect(hub.requests).toEqual([]);
  });

  it("refuses a release whose summary no longer reads as its stage's, saying why", async () => {
    const dataDir = path.join(scratch, "data");
    const config = path.join(scratch, "c.yaml");
    const { dir } = await release(dataDir, config);
    const manifestFile = path.join(dir, "manifest.json");
    const manifest = JSON.parse(await readFile(manifestFile, "utf8"));
    await writeFile(manifestFile, JSON.stringify({ ...manifest, stats: { files: "all of them" } }));
    const run = await cli(TOY_CLI, ["push", "--config", config, "--repo", "acme/cf"], { HF_TOKEN: TOKEN });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /the bundle in .* does not say which files it wrote \(summary unreadable: files: /,
    );
    expect(run.stderr).toContain("`pnpm pipeline run bundle --force`");
    expect(hub.requests).toEqual([]);
  });

  it("the real CLI refuses an export that is missing, or out of date with the config", async () => {
    const dataDir = path.join(scratch, "data");
    const base = ["push", ...onSamples(dataDir), "--repo", "acme/cf"];
    const env = { HF_TOKEN: TOKEN, HF_ENDPOINT: hub.url };

    const none = await cli(MAIN, base, env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/holds no export; run `pnpm pipeline run export` first/);

    // a hand-made manifest was not produced by this configuration: the runner calls it stale
    await writeExportFixture(dataDir);
    const stale = await cli(MAIN, base, env);
    expect(stale.code).toBe(2);
    expect(stale.stderr).toMatch(/export in .* is stale .*`pnpm pipeline run export`, then push/);
    expect(hub.requests).toEqual([]);
  });
});
