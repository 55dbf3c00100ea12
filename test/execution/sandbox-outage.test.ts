// A sandbox outage mid-run, as a user sees it: no MaxListenersExceededWarning however many runs back
// off at once, and advice without a doubled full stop.
import { readdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SandboxOutageError } from "../../pipeline/execution/errors.js";
import { DEFAULT_FEEDBACK_TEMPLATE } from "../../pipeline/execution/feedback.js";
import { KeptResults } from "../../pipeline/execution/kept.js";
import { HttpSandboxClient } from "../../pipeline/sandbox/client.js";
import { sandboxConfigSchema } from "../../pipeline/sandbox/config.js";
import { sandboxErrorResponse } from "../../pipeline/sandbox/request.js";
import type { CodeRunner } from "../../pipeline/sandbox/types.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { Executor } from "../../stages/dialogue-kit/executor.js";
import type { JournaledRun } from "../../stages/dialogue-kit/journal.js";
import { DialogueRejected } from "../../stages/dialogue-kit/outcome.js";
import { freePort } from "../support/ports.js";
import { makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { numbersStage } from "../support/toy-stages.js";

const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
beforeEach(() => {
  warnings.length = 0;
  process.on("warning", onWarning);
});
afterEach(() => {
  process.off("warning", onWarning);
});

/** A client of a server nothing listens at, tried for `probe_s` (test/sandbox/unreachable.test.ts). */
async function downClient(probe_s = 0.3): Promise<HttpSandboxClient> {
  const port = await freePort();
  return new HttpSandboxClient(
    sandboxConfigSchema.parse({ url: `http://127.0.0.1:${port}`, client_retries: 2, probe_s }),
  );
}

/** A client whose server answered once (a 500), then went away: an outage, not a wrong address. */
async function wentDownClient(): Promise<HttpSandboxClient> {
  const server = createServer((_req, res) => res.writeHead(500).end("restarting"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new HttpSandboxClient(sandboxConfigSchema.parse({ url, client_retries: 0 }));
  await expect(client.run({ code: "print(1)", language: "python" })).rejects.toThrow(/HTTP 500/);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  return client;
}

describe("a sandbox outage", () => {
  it("32 runs backing off on one run signal raise no MaxListenersExceededWarning", async () => {
    const client = await downClient();
    const signal = new AbortController().signal;
    const results = await Promise.allSettled(
      Array.from({ length: 32 }, () => client.run({ code: "print(1)", language: "python" }, { signal })),
    );
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    await client.close();
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([]);
  });

  it("an abort still ends every run that is backing off", async () => {
    const client = await downClient(60);
    const controller = new AbortController();
    const runs = Array.from({ length: 12 }, () =>
      client.run({ code: "print(1)", language: "python" }, { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(new Error("stopped by the test")), 50);
    const results = await Promise.allSettled(runs);
    await client.close();
    for (const r of results) {
      expect(r.status).toBe("rejected");
      expect(((r as PromiseRejectedResult).reason as Error).message).toBe("stopped by the test");
    }
  });

  it("the dialogue stages' outage advice has a single full stop between its sentences", async () => {
    const client = await wentDownClient();
    const executor = new Executor(
      client,
      4,
      { run_timeout_s: 2, compile_timeout_s: 2, sandbox_attempts: 1 },
      DEFAULT_FEEDBACK_TEMPLATE,
    );
    const journal = new KeptResults<JournaledRun>(tempDir()).open("r1");
    const error = await executor
      .run(journal, { code: "print(1)", lang: "python", context: [] })
      .catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(SandboxOutageError);
    const message = (error as Error).message;
    expect(message).toContain("sandbox.url is right. Check the sandbox");
    expect(message).not.toMatch(/\.\./);
  });

  it("the runner's summary of failed records quotes a reason without doubling its full stop", async () => {
    const failing = defineStage({
      name: "failing",
      description: "fails every record with a detail that is a whole sentence",
      upstream: ["numbers"],
      kind: "record",
      configSchema: z.object({}).strict(),
      process: async () => ({
        failed: { reason: "sandbox-error", detail: "the sandbox is down. Check it and run again." },
      }),
    });
    const runner = makeRunner([numbersStage, failing] as Stage<unknown>[], {
      dir: tempDir(),
      yaml: "stages:\n  numbers: {count: 3}\n",
    });
    const error = await runner.run(["failing"]).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain(
      "3 x sandbox-error (e.g. the sandbox is down. Check it and run again). The other",
    );
    expect(message).not.toMatch(/\.\)|\.\./);
  });
});

describe("a sandbox without the language", () => {
  it("the dialogue stages reject the record as language-unavailable and journal nothing", async () => {
    const noGo: CodeRunner = {
      run: async () => sandboxErrorResponse("go is missing on this server", "toolchain_missing"),
      close: async () => {},
    };
    const settings = { run_timeout_s: 2, compile_timeout_s: 2, sandbox_attempts: 3, backoff_ms: 1 };
    const executor = new Executor(noGo, 2, settings, DEFAULT_FEEDBACK_TEMPLATE);
    const dir = tempDir();
    const journal = new KeptResults<JournaledRun>(dir).open("r1");
    const error = await executor
      .run(journal, { code: "package main", lang: "go", context: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DialogueRejected);
    expect(error).toMatchObject({
      reason: "language-unavailable",
      detail: "go: go is missing on this server",
    });
    expect(readdirSync(dir)).toEqual([]);
  });
});
