// The leetcode stage through the CLI on a hand-written TACO fixture, with the test LLM server writing
// the texts and the translations: what is rejected and why, which solutions pass, how problems are
// grouped, the shape of a follow-up, a forced rerun that runs nothing and asks nothing again, and a
// run killed with -9 while a program is in flight that, resumed, judges no kept verdict again.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractCodeBlocks } from "../../pipeline/code/extract.js";
import { type Dialogue, parseDialogue } from "../../pipeline/dialogue.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import type { SandboxUsage } from "../../pipeline/usage.js";
import { testConfig } from "../sandbox/helpers.js";
import { HELD_PROGRAM_S, startHeldSandbox } from "../support/held-sandbox.js";
import { keptEntries } from "../support/kept.js";
import { type LlmServer, lastUserMessage, startLlmServer } from "../support/llm-server.js";
import { cli, manifestStats, stored } from "./leetcode-cli.js";
import {
  PAIRS_BRUTE,
  PAIRS_CPP_WRONG,
  PAIRS_HANGS,
  PAIRS_HASH,
  PAIRS_JAVA,
  PAIRS_WRONG,
  RUNNING,
  TACO_ONLY,
  UNIQUE_COUNTER,
  UNIQUE_SCAN,
  VOWELS,
  VOWELS_WRONG,
  writeTacoFixture,
} from "./leetcode-fixture.js";

const isTranslation = (text: string, language: string) =>
  text.startsWith("Translate the following Python solution") && text.includes(`into ${language}.`);

let server: LlmServer;
let root: string;
let dataDir: string;
let hub: string;
let first: { code: number | null; stderr: string };
let firstSandbox: SandboxUsage | undefined;
let dialogues: Dialogue[];

const options = () => ({ dataDir, hub, llm: server.url });
const EXTRA = [
  ...TACO_ONLY,
  "--set",
  "stages.leetcode.follow_up.languages=[java, cpp]",
  "--set",
  "stages.leetcode.similar.group_size=[2]",
];

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "leetcode-stage-"));
  dataDir = path.join(root, "data");
  hub = writeTacoFixture(path.join(root, "hub"));
  server = await startLlmServer({
    rules: [
      {
        match: (r) => isTranslation(lastUserMessage(r), "Java") && lastUserMessage(r).includes("countPairs"),
        reply: `\`\`\`java\n${PAIRS_JAVA}\`\`\``,
      },
      {
        match: (r) => isTranslation(lastUserMessage(r), "C++") && lastUserMessage(r).includes("countPairs"),
        reply: `Here it is:\n\`\`\`cpp\n${PAIRS_CPP_WRONG}\`\`\``,
      },
      {
        match: (r) => isTranslation(lastUserMessage(r), "Java") || isTranslation(lastUserMessage(r), "C++"),
        reply: "I would rather not.",
      },
      {
        match: /^Here is a list containing a series of dialogues/,
        // the model was told to write text only; the code it adds anyway must not reach the dialogue
        reply: (r) =>
          `My solution handles the latest problem step by step (${r.key}).\n\n\`\`\`python\nprint("model code")\n\`\`\``,
      },
    ],
  });
  first = await cli(["run", "leetcode", ...EXTRA], options());
  firstSandbox = new StageStore(dataDir, "leetcode").manifest()?.sandbox;
  dialogues = (await stored(dataDir, "leetcode")) as unknown as Dialogue[];
});

afterAll(async () => {
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const byMethod = (method: string) => dialogues.filter((d) => d.method === method);
const codeOf = (content: string) => extractCodeBlocks(content).map((b) => b.code);

describe("leetcode stage", () => {
  it("completes, and every output is a well-formed dialogue", () => {
    expect(first.code, first.stderr).toBe(0);
    expect(dialogues.length).toBeGreaterThan(0);
    for (const d of dialogues) expect(parseDialogue(d)).toMatchObject({ ok: true });
  });

  it("rejects malformed LeetCode rows and the problem no solution of which passes, with reasons; other sources are skipped", async () => {
    const rejects = await stored(dataDir, "leetcode", true);
    const reasons = Object.fromEntries(rejects.map((r) => [r.reason, r]));
    expect(Object.keys(reasons).sort()).toEqual(["bad-tests", "no-solutions"]);
    expect(String(reasons["bad-tests"]!.detail)).toMatch(/input_output is not JSON/);
    const stats = manifestStats(dataDir, "leetcode") as {
      read: { other_sources: Record<string, number>; kept: number };
    };
    expect(stats.read.other_sources).toEqual({ codeforces: 1 });
    expect(stats.read.kept).toBe(4);
    // kept in the manifest, with the reject reasons the runner counted: no side file in the work dir
    expect(new StageStore(dataDir, "leetcode").manifest()!.rejectReasons).toEqual({
      "bad-tests": 1,
      "no-solutions": 1,
    });
    expect(readdirSync(path.join(dataDir, "leetcode", "work"))).not.toContain("leetcode-stats.json");
  });

  it("counts every solution's verdict, and never uses a wrong or never-ending one", () => {
    const stats = manifestStats(dataDir, "leetcode") as { validation: { solutions: Record<string, number> } };
    expect(stats.validation.solutions).toMatchObject({
      passed: 6,
      "wrong-answer": 2,
      timeout: 1,
      "runtime-error": 0,
    });
    // the programs its judging ran (a stdin/stdout solution runs once per test) are in the manifest
    const sandbox = new StageStore(dataDir, "leetcode").manifest()!.sandbox!;
    expect(sandbox.runs).toBeGreaterThanOrEqual(9);
    expect(sandbox.busyMs).toBeGreaterThan(0);
    const allowed = new Set(
      [PAIRS_BRUTE, PAIRS_HASH, RUNNING, UNIQUE_COUNTER, UNIQUE_SCAN, VOWELS, PAIRS_JAVA].map((c) =>
        c.trimEnd(),
      ),
    );
    for (const d of dialogues) {
      for (const m of d.messages.filter((m) => m.role === "assistant")) {
        const blocks = codeOf(m.content);
        expect(blocks).toHaveLength(1);
        expect(allowed.has(blocks[0]!)).toBe(true);
        // kept byte for byte: the fence holds exactly the validated program
        expect(m.content.endsWith(`${blocks[0]}\n\`\`\``)).toBe(true);
      }
      const text = JSON.stringify(d.messages);
      for (const bad of [PAIRS_WRONG, PAIRS_HANGS, VOWELS_WRONG, PAIRS_CPP_WRONG, 'print("model code")'])
        expect(text).not.toContain(JSON.stringify(bad.trimEnd()).slice(1, -1));
    }
  });

  it("groups problems that share tags, none twice", () => {
    const similar = byMethod("leetcode-similar-problem");
    expect(similar.length).toBeGreaterThan(0);
    const seen = new Set<string>();
    for (const d of similar) {
      const problems = d.meta.problems as { id: string; tags: string[] }[];
      expect(problems).toHaveLength(2);
      expect(problems[0]!.tags.some((t) => problems[1]!.tags.includes(t))).toBe(true);
      expect((d.meta.shared_tags as string[]).length).toBeGreaterThan(0);
      for (const p of problems) {
        expect(seen.has(p.id)).toBe(false);
        seen.add(p.id);
      }
      expect(d.messages.filter((m) => m.role === "user")).toHaveLength(2);
    }
  });

  it("follows up with TACO's expected complexity, then a translation that passes; the failing one is dropped", () => {
    const pairs = byMethod("leetcode-follow-up").find(
      (d) => (d.meta.problem as { name: string }).name === "count-pairs",
    );
    expect(pairs).toBeDefined();
    const [ask, brute, faster, fast, java, javaCode] = pairs!.messages;
    expect(ask!.content).toContain("how many pairs");
    expect(ask!.content).toContain("def countPairs(self, nums: List[int], k: int) -> int:");
    expect(codeOf(brute!.content)).toEqual([PAIRS_BRUTE.trimEnd()]);
    expect(faster!.content).toMatch(/O\(n\)/);
    expect(codeOf(fast!.content)).toEqual([PAIRS_HASH.trimEnd()]);
    expect(java!.content).toMatch(/Java/);
    expect(codeOf(javaCode!.content)).toEqual([PAIRS_JAVA.trimEnd()]);
    expect(javaCode!.content).toContain("```java\n");
    expect(pairs!.messages).toHaveLength(6);
    expect(pairs!.meta.follow_ups).toEqual([
      { kind: "complexity", solution: 3 },
      { kind: "language", language: "java", tests: 3 },
    ]);
    expect(pairs!.meta.dropped).toEqual([
      expect.objectContaining({ language: "cpp", reason: "failed-tests" }),
    ]);
    expect(pairs!.id).toMatch(/^lc-fu-/);
  });

  it("asks for another approach where TACO names no complexity", () => {
    const unique = byMethod("leetcode-follow-up").find(
      (d) => (d.meta.problem as { name: string }).name === "first-unique-character",
    );
    expect(unique!.meta.follow_ups).toEqual([{ kind: "alternative", solution: 1 }]);
    expect(codeOf(unique!.messages[1]!.content)).toEqual([UNIQUE_SCAN.trimEnd()]);
    expect(codeOf(unique!.messages[3]!.content)).toEqual([UNIQUE_COUNTER.trimEnd()]);
  });

  it("sends the paper's prompt with the dialogue so far, the latest problem and the code", () => {
    const texts = server.requests.filter((r) => lastUserMessage(r).startsWith("Here is a list containing"));
    const second = texts.find(
      (r) =>
        lastUserMessage(r).includes("@@Recent Problem: \nCould you solve it with a different approach?") ||
        lastUserMessage(r).includes("@@Recent Problem: \nIs there another way") ||
        lastUserMessage(r).includes("@@Recent Problem: \nCan you write a different solution"),
    );
    expect(second).toBeDefined();
    const prompt = lastUserMessage(second!);
    expect(prompt).toContain('"role": "assistant"');
    expect(prompt).toContain(`@@Code: \n${UNIQUE_COUNTER}`);
  });

  it("a forced rerun reads every verdict back, asks the model nothing new, and writes the same dialogues", async () => {
    const before = server.count;
    const again = await cli(["run", "leetcode", "--force", ...EXTRA], options());
    expect(again.code, again.stderr).toBe(0);
    expect(server.count).toBe(before);
    const stats = manifestStats(dataDir, "leetcode") as {
      validation: { verdicts_computed: number; verdicts_reused: number };
    };
    expect(stats.validation.verdicts_computed).toBe(0);
    expect(stats.validation.verdicts_reused).toBe(9);
    // every verdict read back: the sandbox ran nothing
    expect(firstSandbox!.runs).toBeGreaterThanOrEqual(9);
    expect(new StageStore(dataDir, "leetcode").manifest()!.sandbox).toBeUndefined();
    const rerun = (await stored(dataDir, "leetcode")) as unknown as Dialogue[];
    expect(rerun.map((d) => JSON.stringify(d)).sort()).toEqual(
      dialogues.map((d) => JSON.stringify(d)).sort(),
    );
    expect(
      (stats as unknown as Record<string, { turns_per_dialogue: number; paper: unknown }>)[
        "leetcode-follow-up"
      ],
    ).toMatchObject({
      paper: { dialogues: 200, turns_per_dialogue: 3.8 },
    });
  });

  it("killed with -9 while a program is in flight, then resumed, judges no kept verdict again", async () => {
    const killDir = path.join(root, "killed");
    const embedded = new EmbeddedSandbox(testConfig({ workers: 2 }));
    const sandbox = await startHeldSandbox(embedded);
    try {
      const args = ["run", "leetcode", ...EXTRA, "--set", `sandbox.url=${sandbox.url}`];
      const at = { ...options(), dataDir: killDir };
      // the Java translation is judged after every solution: held, it is in flight at the kill
      sandbox.hold(/seen\.getOrDefault\(k - x, 0\)/);
      const killed = await cli(args, at, () => sandbox.held() >= 1);
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      const verdicts = (dir: string) => keptEntries(path.join(dir, "leetcode", "work", "verdicts"));
      expect(verdicts(killDir)).toBeGreaterThan(0);
      sandbox.hold(undefined);
      // the killed run's last programs end (their client gone) before this run's are counted
      await sandbox.idle();
      sandbox.resetCount();
      const resumed = await cli(args, at);
      expect(resumed.code, resumed.stderr).toBe(0);
      // the verdicts of the killed run were read back, not judged again: each kept once, as in an
      // uninterrupted run, and fewer programs ran than in one
      expect(verdicts(killDir)).toBe(verdicts(dataDir));
      expect(sandbox.answered()).toBeLessThan(firstSandbox!.runs);
      expect(sandbox.answered()).toBeGreaterThan(0);
      // counted per run: this run's programs
      const counted = new StageStore(killDir, "leetcode").manifest()!.sandbox!;
      expect(counted.runs).toBeGreaterThanOrEqual(sandbox.answered());
      expect(counted.runs).toBeLessThanOrEqual(firstSandbox!.runs);
      expect(counted.busyMs).toBe(counted.runs * HELD_PROGRAM_S * 1000);
    } finally {
      await sandbox.close();
      await embedded.close();
    }
  });
});
