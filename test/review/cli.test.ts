// `pnpm pipeline show`, `review mark`, `review export-marks` and `review` as a user runs them, over a
// data dir whose validate stage was written by the store's writer: what they print, the marks they
// keep, and exit 2 for an unknown stage or id, a taken port, another host without a token.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { MAIN, onSamples, ROOT, runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";

function dataDir(): string {
  const dir = tempDir("cf-review-cli-");
  const writer = new StageStore(dir, "validate").newPart();
  writer.append({
    s: 0,
    o: [
      {
        id: "sim-1",
        messages: [
          { role: "user", content: "Sum in Go" },
          { role: "assistant", content: "```go\npackage main\nfunc main() { panic(1) }\n```" },
        ],
        method: "interaction-simulation",
        sources: ["magicoder:000001"],
        lang: "go",
        meta: {
          validation: {
            outcome: "failed",
            error: "panic: 1",
            blocks: [
              {
                message: 1,
                block: 0,
                lang: "go",
                outcome: "failed",
                error: "panic: 1",
                time_s: 0.5,
                exit_code: 2,
                stdout: "started\n",
                stderr: "panic: 1\n\ngoroutine 1 [running]:\n",
                peak_memory_kb: 3072,
              },
            ],
            gates: [],
          },
        },
      },
    ],
  });
  writer.close();
  return dir;
}

const pipeline = (dir: string, ...args: string[]) =>
  runCli([...args, ...onSamples(dir)], { env: { CODEFEEDBACK_REVIEWER: "ann" } });

describe("review from the command line", () => {
  it("shows a record, marks it, exports the marks; exits 2 on an unknown stage or id", async () => {
    const dir = dataDir();
    const shown = await pipeline(dir, "show", "validate", "sim-1");
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("validation: failed: panic: 1");
    expect(shown.stdout).toContain("[block 0, go] failed, exit 2, 0.500 s, 3.0 MiB: panic: 1");
    expect(shown.stdout).toContain(
      "    stdout:\n      started\n    stderr:\n      panic: 1\n      \n      goroutine 1",
    );
    // export has not run on this data dir: the dialogue's place in the release is not known yet
    expect(shown.stdout).toContain("release: export is not started: not known yet");
    const unknownId = await pipeline(dir, "show", "validate", "sim-404");
    expect([unknownId.code, unknownId.stderr]).toEqual([
      2,
      expect.stringContaining("validate has no record sim-404"),
    ]);
    const unknownStage = await pipeline(dir, "show", "nowhere", "sim-1");
    expect([unknownStage.code, unknownStage.stderr]).toEqual([
      2,
      expect.stringContaining("no stage named nowhere"),
    ]);
    const marked = await pipeline(
      dir,
      "review",
      "mark",
      "sim-1",
      "bad",
      "--reason",
      "wrong-execution-claim",
      "--note",
      "n",
    );
    expect(marked.code, marked.stderr).toBe(0);
    expect((await pipeline(dir, "review", "mark", "sim-404", "bad")).code).toBe(2);
    const exported = await pipeline(dir, "review", "export-marks");
    expect(exported.code, exported.stderr).toBe(0);
    const marks = exported.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(marks.map((m) => [m.id, m.verdict, m.reason, m.reviewer])).toEqual([
      ["sim-1", "bad", "wrong-execution-claim", "ann"],
    ]);
    expect((await pipeline(dir, "show", "validate", "sim-1")).stdout).toContain(
      "ann: bad (wrong-execution-claim)",
    );
  });

  it("exits 2 naming a taken port, and off loopback without a token", async () => {
    const dir = dataDir();
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = String((blocker.address() as { port: number }).port);
    try {
      const taken = await pipeline(dir, "review", "--port", port);
      expect([taken.code, taken.stderr]).toEqual([2, expect.stringContaining(`port ${port} is in use`)]);
    } finally {
      blocker.close();
    }
    const open = await runCli(["review", "--host", "0.0.0.0", "--port", "0", ...onSamples(dir)], {
      env: { CODEFEEDBACK_REVIEW_TOKEN: undefined },
    });
    expect([open.code, open.stderr]).toEqual([2, expect.stringContaining("--token")]);
  });

  it("says so over a data dir with no runs, and serves", async () => {
    const dir = tempDir("cf-review-cli-empty-");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", MAIN, "review", "--port", "0", ...onSamples(dir)],
      {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
          if (stderr.includes("review app: ")) resolve();
        });
        child.on("exit", () => reject(new Error(stderr)));
      });
      expect(stderr).toContain("holds no run yet");
      const url = /review app: (\S+)/.exec(stderr)![1]!;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('"hasRuns":false');
    } finally {
      child.kill();
    }
  });
});
