// A real sandbox server (`pipeline sandbox serve`) killed mid-run, then started again on its port:
// with `sandbox.on_outage: stop` the run stops with exit 3 naming it, no more records failed than
// were in flight, and the rerun gives an undisturbed run's records; with `wait` the run waits for it
// and ends as an undisturbed run.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { probeIsolationMode } from "../sandbox/helpers.js";
import { type CliResult, MAIN, ROOT, runCli } from "../support/cli.js";
import { freePort } from "../support/ports.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";

const mode = await probeIsolationMode();
const TOY_CLI = new URL("../support/sandbox-toy-cli.ts", import.meta.url).pathname;
const COUNT = 120;
const CONCURRENCY = 4;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** `pipeline sandbox serve` on `port`, once it says it listens. */
async function serve(port: number): Promise<ChildProcess> {
  const config = join(tempDir(), "server.yaml");
  writeFileSync(config, "sandbox: {workers: 2}\n");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "sandbox", "serve", "--port", String(port), "--config", config],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the sandbox server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.includes("listening on")) resolve();
    });
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

/** A config of the toy stages with its data dir, the stage `programs` asking the server at `port`. */
function config(port: number, sandbox = ""): { file: string; data: string } {
  const dir = tempDir();
  const file = join(dir, "c.yaml");
  const data = join(dir, "data");
  writeFileSync(
    file,
    `data_dir: ${data}\nsandbox: {url: "http://127.0.0.1:${port}", workers: 2${sandbox}}\n` +
      `stages:\n  numbers: {count: ${COUNT}}\n  programs: {concurrency: ${CONCURRENCY}}\n`,
  );
  return { file, data };
}

const lines = (data: string) =>
  new StageStore(data, "programs")
    .parts()
    .flatMap((p) => readFileSync(p, "utf8").split("\n").filter(Boolean));
const failedIn = (data: string) => lines(data).filter((line) => "f" in JSON.parse(line));
const outputs = async (data: string) =>
  (await collect(new StageStore(data, "programs").read())).map((r) => JSON.stringify(r)).sort();

/** `run programs` in a child; `onStderr` sees its standard error as it comes. */
function runPrograms(file: string, onStderr: (all: string) => void = () => {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", TOY_CLI, "run", "programs", "--config", file], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      onStderr(stderr);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Resolves once `programs` has committed some records (programs ran), polling its files. */
async function someCommitted(data: string): Promise<void> {
  while (lines(data).length < 10) await new Promise((r) => setTimeout(r, 5));
}

describe.skipIf(mode === null)("a sandbox server that dies mid-run", () => {
  let undisturbed: string[];
  beforeAll(async () => {
    const port = await freePort();
    const server = await serve(port);
    const { file, data } = config(port);
    const run = await runCli(["run", "programs", "--config", file], { entry: TOY_CLI });
    expect(run.code, run.stderr).toBe(0);
    undisturbed = await outputs(data);
    expect(undisturbed.length).toBe(COUNT);
    await kill(server);
  });

  it("on_outage stop: exit 3 naming the server, at most the records in flight failed; the rerun is undisturbed", async () => {
    const port = await freePort();
    const server = await serve(port);
    const { file, data } = config(port, ", outage_s: 0.1, on_outage: stop");
    const running = runPrograms(file);
    await someCommitted(data);
    await kill(server);
    const stopped = await running;
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toContain(
      `every sandbox server (http://127.0.0.1:${port}/run_code) has failed since`,
    );
    expect(stopped.stderr).toContain("stopping, as sandbox.on_outage is stop");
    expect(stopped.stderr).not.toMatch(/\n\s+at /);
    expect(failedIn(data).length).toBeLessThanOrEqual(CONCURRENCY);
    expect((await outputs(data)).length).toBeLessThan(COUNT);

    await serve(port);
    const rerun = await runPrograms(file);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await outputs(data)).toEqual(undisturbed);
  });

  it("on_outage wait: the run waits for the server and ends as an undisturbed run", async () => {
    const port = await freePort();
    const server = await serve(port);
    const { file, data } = config(port, ", outage_s: 0.1, on_outage: wait");
    let waiting: () => void = () => {};
    const said = new Promise<void>((resolve) => (waiting = resolve));
    const running = runPrograms(file, (stderr) => {
      if (stderr.includes(`waiting for http://127.0.0.1:${port}/run_code since`)) waiting();
    });
    await someCommitted(data);
    await kill(server);
    await said;
    await serve(port);
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("answers again");
    expect(failedIn(data)).toEqual([]);
    expect(await outputs(data)).toEqual(undisturbed);
  });
});
