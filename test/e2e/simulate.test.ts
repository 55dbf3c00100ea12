// `pnpm pipeline run simulate correct` end to end with configs/sample.yaml against the scripted
// OpenAI-compatible test server: the dialogues `cat` prints; a run killed with -9 mid-simulate that
// resumes to the same dialogues, re-sending only what was in flight, even with random output; and
// simulate and correct killed with programs in flight, whose redone records replay the kept programs.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDialogue } from "../../pipeline/dialogue.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { partOf, STRONG_MODEL, scriptedReply, WEAK_MODEL } from "../dialogue-kit/script.js";
import { filesContaining } from "../llm/helpers.js";
import { testConfig } from "../sandbox/helpers.js";
import { HELD_PROGRAM_S, startHeldSandbox } from "../support/held-sandbox.js";
import { keptEntries } from "../support/kept.js";
import { type LlmServer, type ReceivedRequest, startLlmServer } from "../support/llm-server.js";
import { collect } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { cli } from "./kit.js";

const SECRET = "sk-simulate-e2e-7c1d";
const IN_FLIGHT = 4;
const SETS = [
  ["llm.weak.model", WEAK_MODEL],
  ["llm.strong.model", STRONG_MODEL],
  ["llm.weak.provider", "openai"],
  ["llm.strong.provider", "openai"],
  ["stages.simulate.concurrency", String(IN_FLIGHT)],
  ["stages.correct.concurrency", String(IN_FLIGHT)],
].flatMap(([k, v]) => ["--set", `${k}=${v}`]);

let server: LlmServer;
const ref = tempDir("cf-simulate-e2e-ref-");
const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: SECRET });
const outputs = async (dir: string, stage: string) =>
  (await collect(new StageStore(dir, stage).read())).map((r) => JSON.stringify(r)).sort();
const withoutTimes = (lines: string[]) => lines.map((l) => l.replace(/"time_s":[\d.]+/g, '"time_s":0'));
const isDialogueRequest = (r: ReceivedRequest) => partOf(r) !== "scorer";
const answersResult = (r: ReceivedRequest) =>
  partOf(r) === "strong" && r.body.messages.at(-1)!.content.startsWith("Execution result");
const queryOf = (r: ReceivedRequest) => r.body.messages.find((m) => m.role === "user")!.content;
const sandboxOf = (dir: string, stage: string) => new StageStore(dir, stage).manifest()?.sandbox;
/** Entries a stage has committed so far (whole lines of its parts), read while it runs. */
const committedLines = (dir: string, stage: string) => {
  const parts = join(dir, stage, "parts");
  let files: string[];
  try {
    files = readdirSync(parts);
  } catch {
    return 0;
  }
  return files.reduce((n, f) => n + readFileSync(join(parts, f), "utf8").split("\n").length - 1, 0);
};
/** The sandbox runs a dialogue stage keeps. */
const keptRuns = (dir: string, stage: string) => keptEntries(join(dir, stage, "work", "executions"));

beforeAll(async () => {
  server = await startLlmServer({ fallback: scriptedReply, requireKey: SECRET, latencyMs: 5 });
  const run = await cli(ref, ["run", "simulate", "correct", ...SETS], env());
  expect(run.code, run.stderr).toBe(0);
});
afterAll(async () => {
  await server.close();
});

describe("pnpm pipeline run simulate|correct with configs/sample.yaml", () => {
  it("writes dialogues that `cat` prints in the shared dialogue format, and keeps the key out of every file", async () => {
    for (const [stage, method] of [
      ["simulate", "interaction-simulation"],
      ["correct", "code-correction"],
    ] as const) {
      const cat = await cli(ref, ["cat", stage], env());
      expect(cat.code, cat.stderr).toBe(0);
      const lines = cat.stdout.trim().split("\n");
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const parsed = parseDialogue(JSON.parse(line));
        expect(parsed.ok, line).toBe(true);
        if (parsed.ok) expect(parsed.dialogue.method).toBe(method);
      }
      expect(lines.sort()).toEqual(await outputs(ref, stage));
    }
    expect((await outputs(ref, "simulate")).length).toBe(12);
    expect((await outputs(ref, "correct")).length).toBe(6);
    expect(filesContaining(ref, SECRET)).toEqual([]);
  });

  it("resumed after a kill -9 in the middle of simulate, ends with the reference dialogues, re-sending only what was in flight", async () => {
    const dir = tempDir("cf-simulate-e2e-kill-");
    server.reset();
    const killed = await cli(
      dir,
      ["run", "simulate", ...SETS],
      env(),
      () => server.requests.filter(isDialogueRequest).length >= 20,
    );
    expect(killed.signal).toBe("SIGKILL");
    const first = server.requests.filter(isDialogueRequest).map((r) => r.key);
    const firstKeys = new Set(first);
    server.reset();
    const resumed = await cli(dir, ["run", "simulate", ...SETS], env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const resent = server.requests.filter((r) => firstKeys.has(r.key));
    expect(resent.length).toBeLessThanOrEqual(IN_FLIGHT);
    // The reference ran its programs separately: everything but their wall-clock times must agree.
    expect(withoutTimes(await outputs(dir, "simulate"))).toEqual(
      withoutTimes(await outputs(ref, "simulate")),
    );
  });

  it("shows a resumed dialogue the same random output its first run saw", async () => {
    const dir = tempDir("cf-simulate-e2e-random-");
    server.reset();
    // every first answer prints a random number; answers to execution results hang until the kill
    server.options.rules = [
      {
        match: (r) => partOf(r) === "weak",
        reply: "```python\nimport random\nprint(random.getrandbits(60))\n```",
      },
    ];
    server.options.latencyMs = (r) => (answersResult(r) ? 60_000 : 5);
    try {
      const killed = await cli(
        dir,
        ["run", "simulate", ...SETS],
        env(),
        () => server.requests.filter(answersResult).length >= IN_FLIGHT,
      );
      expect(killed.signal).toBe("SIGKILL");
      const seen = new Map(
        server.requests.filter(answersResult).map((r) => [queryOf(r), r.body.messages.at(-1)!.content]),
      );
      expect(seen.size).toBe(IN_FLIGHT);
      const firstKeys = new Set(server.requests.map((r) => r.key));
      server.options.latencyMs = 5;
      server.reset();
      const resumed = await cli(dir, ["run", "simulate", ...SETS], env());
      expect(resumed.code, resumed.stderr).toBe(0);
      // the same execution result went into the same conversation: the hung requests are sent again as they were
      for (const r of server.requests.filter(answersResult)) {
        if (seen.has(queryOf(r)) && r.body.messages.length === 5) expect(firstKeys.has(r.key)).toBe(true);
      }
      const dialogues = (await collect(new StageStore(dir, "simulate").read())).map(
        (r) => r as unknown as { messages: { content: string }[] },
      );
      for (const [query, result] of seen) {
        const d = dialogues.find((x) => x.messages[1]!.content === query)!;
        expect(d.messages[3]!.content).toBe(result);
        expect(result).toMatch(/^Execution result: \n\d+$/);
      }
    } finally {
      server.options.rules = [];
      server.options.latencyMs = 5;
    }
  });

  it("resumed after a kill -9 with programs in flight, runs no kept program again", async () => {
    const dir = tempDir("cf-simulate-e2e-programs-");
    const embedded = new EmbeddedSandbox(testConfig({ workers: 2 }));
    const sandbox = await startHeldSandbox(embedded);
    try {
      // the second program of a record in the sample's script, its first one run (and journaled):
      // simulate's runs in the session of the first (a notebook program replaying earlier cells)
      for (const [stage, second] of [
        ["simulate", /^_nb_previous = \[/m],
        ["correct", /print\(sum\(values\)/],
      ] as const) {
        const sets = [
          ...SETS,
          ...["--set", `sandbox.url=${sandbox.url}`, "--set", `stages.${stage}.execution.concurrency=8`],
        ];
        // two records' second programs run, so those records can commit; the rest are held until
        // the kill, which lands once the two are committed and a held one is in flight
        sandbox.hold(second, 2);
        const killed = await cli(
          dir,
          ["run", stage, ...sets],
          env(),
          () => committedLines(dir, stage) >= 2 && sandbox.held() >= 1,
        );
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
        sandbox.hold(undefined);
        // the killed run's last programs end (their client gone) before this run's are counted
        await sandbox.idle();
        sandbox.resetCount();
        const resumed = await cli(dir, ["run", stage, ...sets], env());
        expect(resumed.code, resumed.stderr).toBe(0);
        const reference = sandboxOf(ref, stage)!;
        const counted = sandboxOf(dir, stage)!;
        expect(reference.runs).toBeGreaterThan(0);
        // the records redone replayed the runs their killed run had kept: each run kept once, as
        // in an uninterrupted run (a run kept twice was run twice)
        expect(keptRuns(dir, stage), stage).toBe(keptRuns(ref, stage));
        expect(sandbox.answered(), stage).toBeGreaterThan(0);
        // counted per run and carried on: this run's programs, and none that ran twice
        expect(counted.runs, stage).toBeGreaterThanOrEqual(sandbox.answered());
        expect(counted.runs, stage).toBeLessThanOrEqual(reference.runs);
        expect(counted.busyMs, stage).toBe(counted.runs * HELD_PROGRAM_S * 1000);
      }
    } finally {
      await sandbox.close();
      await embedded.close();
    }
  });
});
