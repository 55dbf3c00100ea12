// The validate stage through the runner: the dialogue stages read one after the other, the drop / keep
// policy from the config, tags in meta.validation, the outcome table in the manifest, and a sandbox
// outage that fails dialogues (retried on the next run) instead of dropping them.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import type { PipelineRecord } from "../../pipeline/record.js";
import { EmbeddedSandbox, HttpSandboxClient, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import type { ValidateSummary } from "../../stages/validate/summary.js";
import { defineValidateStage } from "../../stages/validate.js";
import { testConfig } from "../sandbox/helpers.js";
import { collect, makeRunner, noServices } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { dialogue, dialogueSource, fence, sampleDialogues, turns } from "./fixtures.js";

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

function runnerFor(dir: string, yaml: string, runner: CodeRunner, upstream = ["pack", "simulate"]) {
  const samples = sampleDialogues();
  // pack gives the first three dialogues, simulate the rest: validate reads both, pack first
  const stages = [
    dialogueSource("pack", () => samples.slice(0, 3), ["single-turn-packing"]),
    dialogueSource("simulate", () => samples.slice(3), ["interaction-simulation"]),
    defineValidateStage(upstream),
  ];
  return makeRunner(stages, {
    dir,
    yaml: `stages:\n  validate:\n    run_timeout_s: 2\n${yaml}`,
    services: { ...noServices, sandbox: () => runner },
  });
}

const validation = (r: PipelineRecord) =>
  (r.meta as { validation: { outcome: string; reason?: string } }).validation;

describe("validate stage", () => {
  it("keeps passing, not-runnable and code-less dialogues with their tags; drops failing and timed-out ones", async () => {
    const dir = tempDir("cf-validate-");
    const runner = runnerFor(dir, "", sandbox);
    await runner.run(["validate"]);
    const status = runner.status("validate");
    expect(status.state).toBe("complete");
    expect(status.manifest!.counts).toEqual({ in: 6, out: 4, rejected: 2, failed: 0 });

    const kept = await collect(runner.store("validate").read());
    const outcomes = Object.fromEntries(
      kept.map((r) => [r.sources && (r.sources as string[])[0], validation(r)]),
    );
    expect(outcomes["s:1"]).toMatchObject({ outcome: "passed" });
    expect(outcomes["s:5"]).toMatchObject({ outcome: "not-runnable", reason: "missing-package" });
    expect(outcomes["s:6"]).toMatchObject({ outcome: "passed" });
    expect(outcomes["s:7"]).toMatchObject({ outcome: "no-code" });
    // the dialogue itself is untouched: same id, messages, method and sources as the upstream's
    const upstream = sampleDialogues().find((d) => d.id === kept[0]!.id)!;
    expect({ ...kept[0], meta: upstream.meta }).toEqual(upstream);
    expect((kept[0]!.meta as Record<string, unknown>).made_by).toBe("test");

    const rejects = await collect(runner.store("validate").read({ rejects: true }));
    expect(
      rejects.map((r) => [r.reason, (r as unknown as { record: PipelineRecord }).record.sources]).sort(),
    ).toEqual([
      ["final-code-failed", ["s:3"]],
      ["final-code-timeout", ["s:4"]],
    ]);
    const failed = rejects.find((r) => r.reason === "final-code-failed")!;
    expect(failed.detail).toContain("ZeroDivisionError");

    const summary = status.manifest!.stats as unknown as ValidateSummary;
    expect(summary.dialogues).toEqual({ validated: 6, kept: 4, dropped: 2, malformed: 0 });
    expect(summary.by_method["single-turn-packing"]).toEqual({
      python: { passed: 1, failed: 1, timeout: 0, "not-runnable": 0, "no-code": 0, kept: 1, dropped: 1 },
      unknown: { passed: 0, failed: 0, timeout: 0, "not-runnable": 0, "no-code": 1, kept: 1, dropped: 0 },
    });
    expect(summary.by_method["interaction-simulation"]).toEqual({
      python: { passed: 0, failed: 0, timeout: 1, "not-runnable": 1, "no-code": 0, kept: 1, dropped: 1 },
      cpp: { passed: 1, failed: 0, timeout: 0, "not-runnable": 0, "no-code": 0, kept: 1, dropped: 0 },
    });
    expect(summary.blocks_by_language.python).toEqual({
      passed: 2,
      failed: 1,
      timeout: 1,
      "not-runnable": 1,
    });
    expect(summary.not_runnable_reasons).toEqual({ "missing-package": 1 });
    expect(summary.dropped_by).toEqual({ failed: 1, timeout: 1 });
    expect(summary.kept["interaction-simulation"]).toMatchObject({
      dialogues: 2,
      by_lang: { python: 1, cpp: 1 },
    });
  });

  it("follows the policy in the config: drop not-runnable too, or keep everything", async () => {
    const strict = runnerFor(
      tempDir("cf-validate-"),
      "    drop: [failed, timeout, not-runnable, no-code]\n",
      sandbox,
    );
    await strict.run(["validate"]);
    expect(strict.status("validate").manifest!.counts).toMatchObject({ out: 2, rejected: 4 });
    const reasons = (await collect(strict.store("validate").read({ rejects: true })))
      .map((r) => r.reason)
      .sort();
    expect(reasons).toEqual([
      "final-code-failed",
      "final-code-no-code",
      "final-code-not-runnable",
      "final-code-timeout",
    ]);

    const lenient = runnerFor(tempDir("cf-validate-"), "    drop: []\n", sandbox);
    await lenient.run(["validate"]);
    expect(lenient.status("validate").manifest!.counts).toMatchObject({ out: 6, rejected: 0 });
  });

  it("rejects a record that is not a dialogue, or of a method no stage declares, naming what is wrong, and goes on", async () => {
    const good = dialogue(
      "single-turn-packing",
      ["g:1"],
      "python",
      turns(["Hi.", fence("python", "print('hi')")]),
    );
    const bad = {
      id: "bad-1",
      messages: [{ role: "user", content: "no answer" }],
      method: "single-turn-packing",
    };
    const undeclared = dialogue(
      "code-correction",
      ["u:1"],
      "python",
      turns(["Hi.", fence("python", "print('hi')")]),
    );
    const runner = makeRunner(
      [
        dialogueSource("pack", () => [bad, good, undeclared], ["single-turn-packing"]),
        defineValidateStage(["pack"]),
      ],
      { dir: tempDir("cf-validate-"), services: { ...noServices, sandbox: () => sandbox } },
    );
    await runner.run(["validate"]);
    const rejects = await collect(runner.store("validate").read({ rejects: true }));
    const [reject, unknown] = [bad.id, undeclared.id].map((id) => rejects.find((r) => r.id === id));
    expect(reject).toMatchObject({ id: "bad-1", reason: "malformed-dialogue" });
    expect(reject!.detail).toMatch(/sources|lang/);
    expect(unknown).toMatchObject({ id: undeclared.id, reason: "malformed-dialogue" });
    expect(unknown!.detail).toBe(
      "method: no stage of this run declares code-correction (declared: single-turn-packing)",
    );
    expect(runner.status("validate").manifest!.counts).toMatchObject({ out: 1, rejected: 2 });
  });

  it("a sandbox outage fails the dialogues (no verdict, no drop); the next run retries exactly those", async () => {
    const dir = tempDir("cf-validate-");
    // a server that answered once, then went down: every request is refused (one that never
    // answered stops the run instead: test/sandbox/server.test.ts)
    const server = createServer((_req, res) => res.writeHead(500).end("restarting"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const down = new HttpSandboxClient(sandboxConfigSchema.parse({ url, client_retries: 0 }));
    await expect(down.run({ code: "print(1)", language: "python" })).rejects.toThrow(/HTTP 500/);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const outage = runnerFor(dir, "    sandbox_attempts: 2\n", down);
    await expect(outage.run(["validate"])).rejects.toThrow(/records failed: 5 x sandbox-error/);
    const partial = outage.status("validate");
    expect(partial.state).toBe("partial");
    // the dialogue without code needs no sandbox, so it is done; the others wait for the sandbox
    expect(partial.manifest!.counts).toEqual({ in: 1, out: 1, rejected: 0, failed: 5 });
    await down.close();

    const again = runnerFor(dir, "    sandbox_attempts: 2\n", sandbox);
    await again.run(["validate"]);
    expect(again.status("validate").manifest!.counts).toEqual({ in: 6, out: 4, rejected: 2, failed: 0 });
    const ids = (await collect(again.store("validate").read())).map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
