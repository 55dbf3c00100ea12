// Batch mode end to end: `pnpm pipeline run filter` with the scorer on the test server's Batches API
// (provider openai) or on batch files (provider files), compared with an online run of the same
// scripted model: the same records, every request answered once, a round per prompt; then kills at
// each step of a round, faults, and bad input.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, outcomeOf, SECRET, useReferenceRun } from "../e2e/kit.js";
import type { BatchApiOptions } from "../support/batch-api.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { runBatch } from "../support/run-batch.js";
import { tempDir } from "../support/temp-dir.js";

const ref = useReferenceRun("cf-batch-ref-");
let server: LlmServer;
const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: SECRET });
const OPENAI = "llm.scorer.batch={provider: openai, poll_s: 0.02, max_poll_s: 0.1}";
const FILES = "llm.scorer.batch={provider: files}";

beforeAll(async () => {
  server = await startLlmServer({ requireKey: SECRET, batch: {} });
});
afterAll(() => server.close());

/** A fresh server state with these batch options. */
function serve(options: BatchApiOptions = {}): void {
  server.reset();
  server.batch!.reset();
  Object.assign(server.options.batch!, { delayMs: 0 }, options);
  for (const key of Object.keys(server.options.batch!) as (keyof BatchApiOptions)[]) {
    if (!(key in options) && key !== "delayMs") delete server.options.batch![key];
  }
}

const twice = () => [...server.answered.entries()].filter(([, n]) => n > 1);
const entries = (dir: string) =>
  existsSync(join(dir, "filter/batch"))
    ? readdirSync(join(dir, "filter/batch"))
        .filter((n) => n.endsWith(".batch.json"))
        .map((n) => JSON.parse(readFileSync(join(dir, "filter/batch", n), "utf8")))
        .sort((a, b) => a.round - b.round)
    : [];

describe("batch mode, provider openai", () => {
  it("makes the online run's records in one batch per prompt, each request answered once", async () => {
    serve();
    const dir = tempDir("cf-batch-openai-");
    const run = await cli(dir, ["run", "filter", "--set", OPENAI], env());
    expect(run.code, run.stderr).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    expect(server.count).toBe(ref.reference.requests);
    expect(twice()).toEqual([]);
    // the filter's two prompts are two rounds
    expect(server.batch!.batches.size).toBe(2);
    expect(entries(dir).map((e) => [e.round, e.state])).toEqual([
      [1, "collected"],
      [2, "collected"],
    ]);
    // switching the role back online re-pays nothing and changes nothing
    server.reset();
    const online = await cli(dir, ["run", "filter", "--force"], env());
    expect(online.code, online.stderr).toBe(0);
    expect(server.count).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  for (const step of ["upload", "create", "created", "poll", "content"] as const) {
    it(`survives a kill -9 at '${step}': the rerun sends no request twice`, async () => {
      let hang = true;
      serve({
        delayMs: step === "poll" ? 60_000 : 0,
        hang: (s) => hang && s === step,
      });
      const dir = tempDir(`cf-batch-kill-${step}-`);
      const killed = await cli(dir, ["run", "filter", "--set", OPENAI], env(), () => reached(step));
      expect(killed.signal).toBe("SIGKILL");
      hang = false;
      server.options.batch!.delayMs = 0;
      const resumed = await cli(dir, ["run", "filter", "--set", OPENAI], env());
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
      expect(twice()).toEqual([]);
      expect(server.count).toBe(ref.reference.requests);
      // one batch per round: the one the killed run made was found again, not made anew
      expect(server.batch!.batches.size).toBe(2);
    });
  }

  it("resubmits failed lines alone, uses an expired batch's partial output, and rides out lost polls and a 5xx upload", async () => {
    serve({
      lineFault: (body, attempt) =>
        attempt === 1 && JSON.stringify(body.messages).length % 3 === 0 ? "fail" : undefined,
      end: (b) =>
        b.id === [...server.batch!.batches.keys()][0] ? { status: "expired", answered: 40 } : undefined,
      pollFault: (n) => n % 3 === 1,
      uploadFault: (n) => n === 1,
    });
    const dir = tempDir("cf-batch-faults-");
    const run = await cli(
      dir,
      ["run", "filter", "--set", OPENAI, "--set", "llm.scorer.backoff_s=0.01"],
      env(),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    // every answer was paid for once; the failed and expired lines went again, alone
    expect(twice()).toEqual([]);
    const batches = [...server.batch!.batches.values()];
    expect(batches[0]!.status).toBe("expired");
    expect(batches.length).toBeGreaterThan(2);
    // a line is sent again only while it has no answer: never once a batch answered it
    const linesOf = (fileId: string | undefined) =>
      (fileId ? server.batch!.files.get(fileId)!.text : "")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number } | null });
    const answered = new Set<string>();
    for (const b of batches) {
      for (const line of linesOf(b.input_file_id)) expect(answered.has(line.custom_id)).toBe(false);
      for (const line of linesOf(b.output_file_id)) answered.add(line.custom_id);
    }
    expect(answered.size).toBe(ref.reference.requests);
  });

  it("turns lines that keep failing into rejects with the provider's reason, never asked again unless retries grow", async () => {
    const failing = (body: { messages: unknown }) =>
      JSON.stringify(body.messages).includes("5 Points - Expert Level") ? "fail" : undefined;
    serve({ lineFault: failing });
    const dir = tempDir("cf-batch-fail-");
    const once = OPENAI.replace("}", ", retries: 1}");
    const run = await cli(dir, ["run", "filter", "--set", once], env());
    expect(run.code, run.stderr).toBe(0);
    const { rejected } = await outcomeOf(dir);
    const failed = rejected.map((r) => JSON.parse(r)).filter((r) => r.reason === "llm-batch-failed");
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) {
      expect(r.detail).toMatch(/batch-failed after 2 attempts: status 500: injected: the model failed/);
      expect(r.record.id).toBe(r.id);
    }
    const sent = () => [...server.batch!.batches.values()].reduce((n, b) => n + b.request_counts.total, 0);
    const sentOnce = sent();
    // each failing line went out twice (the first time and one retry), never a third time
    expect(sentOnce).toBe(ref.reference.requests + failed.length);
    // a rerun, even --force, replays the verdict from the ledger without asking
    for (const args of [[], ["--force"]]) {
      const again = await cli(dir, ["run", "filter", ...args, "--set", once], env());
      expect(again.code, again.stderr).toBe(0);
      expect(sent()).toBe(sentOnce);
      expect((await outcomeOf(dir)).rejected).toEqual(rejected);
    }
    // the user asks again by allowing one more retry: only those lines go out, once each
    server.options.batch!.lineFault = undefined;
    const asked = await cli(
      dir,
      ["run", "filter", "--force", "--set", OPENAI.replace("}", ", retries: 2}")],
      env(),
    );
    expect(asked.code, asked.stderr).toBe(0);
    expect(sent()).toBe(sentOnce + failed.length);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
  });

  it("exits 2 before uploading anything on a server without a Batches API or with a wrong key", async () => {
    const plain = await startLlmServer({ requireKey: SECRET });
    try {
      const dir = tempDir("cf-batch-nobatches-");
      const run = await cli(dir, ["run", "filter", "--set", OPENAI], {
        OPENAI_BASE_URL: plain.url,
        OPENAI_API_KEY: SECRET,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("has no Batches API");
      expect(run.stderr).toContain("provider: files");
    } finally {
      await plain.close();
    }
    serve();
    const dir = tempDir("cf-batch-badkey-");
    const run = await cli(dir, ["run", "filter", "--set", OPENAI], { ...env(), OPENAI_API_KEY: "sk-wrong" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("refused the key");
    expect(server.batch!.files.size).toBe(0);
  });

  it("--no-wait submits and stops; a later run collects", async () => {
    serve({ delayMs: 60_000 });
    const dir = tempDir("cf-batch-nowait-");
    const first = await cli(dir, ["run", "filter", "--no-wait", "--set", OPENAI], env());
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain("--no-wait");
    expect(server.batch!.batches.size).toBe(1);
    const [submitted] = server.batch!.batches.keys();
    const shown = await cli(dir, ["status", "--set", OPENAI], env());
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(`filter\\s+scorer\\s+1\\s+${submitted}\\s+(validating|in_progress)\\s+0\\s+0\\s+112`),
    );
    // status --refresh collects a batch that ended
    server.options.batch!.delayMs = 0;
    const refreshed = await cli(dir, ["status", "--refresh", "--set", OPENAI], env());
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshed.stdout).toMatch(new RegExp(`${submitted}\\s+completed\\s+112\\s+0\\s+112`));
    const second = await cli(dir, ["run", "filter", "--set", OPENAI], env());
    expect(second.code, second.stderr).toBe(0);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    expect(twice()).toEqual([]);
    expect(server.batch!.batches.size).toBe(2);
  });
});

/** The killed run is stuck at `step` (the server hangs there) or, for `poll`, polling. */
function reached(step: "upload" | "create" | "created" | "poll" | "content"): boolean {
  const batch = server.batch!;
  switch (step) {
    case "upload":
      return batch.files.size > 0;
    case "create":
      // the upload was answered and a create request hangs: no batch exists
      return batch.files.size > 0 && batch.hanging === "create";
    case "created":
      return batch.batches.size > 0;
    case "poll":
      return batch.polls >= 2;
    case "content":
      return batch.hanging === "content";
  }
}

describe("run --dry-run", () => {
  it("prices the requests online and in batch mode side by side", async () => {
    const dir = tempDir("cf-batch-dry-");
    const upstream = await cli(dir, ["run", "dedup"], env());
    expect(upstream.code, upstream.stderr).toBe(0);
    const dry = await cli(
      dir,
      ["run", "filter", "--dry-run", "--set", OPENAI.replace("}", ", discount: 0.25}")],
      env(),
    );
    expect(dry.code, dry.stderr).toBe(0);
    const online = Number(/filter: would send \d+ requests.*~\$([\d.]+)/.exec(dry.stderr)?.[1]);
    const batch =
      /filter: in batch mode \(llm.<role>.batch\): ~\$([\d.]+) instead of ~\$([\d.]+) online/.exec(
        dry.stderr,
      );
    expect(online).toBeGreaterThan(0);
    expect(Number(batch?.[2])).toBe(online);
    expect(Number(batch?.[1])).toBeCloseTo(online * 0.25, 1);
  });
});

describe("batch mode, provider files", () => {
  it("stops with exit 3 naming the files and the command, uses partial output, and ends with the online records", async () => {
    serve();
    const dir = tempDir("cf-batch-files-");
    const answered = new Set<string>();
    let rounds = 0;
    for (let i = 0; ; i++) {
      expect(i).toBeLessThan(6);
      const run = await cli(dir, ["run", "filter", "--set", FILES], env());
      if (run.code === 0) break;
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr).toContain("waiting for batch");
      const commands = [...run.stderr.matchAll(/vllm run-batch -i (\S+) -o (\S+) --model (\S+)/g)];
      expect(commands.length).toBeGreaterThan(0);
      rounds++;
      for (const [, input, output] of commands) {
        if (answered.has(input!)) continue;
        answered.add(input!);
        // the first file is answered only in part: the rest goes into the next file
        await runBatch(input!, output!, server.url, {
          apiKey: SECRET,
          ...(i === 0 ? { partial: 30 } : {}),
        });
      }
    }
    expect(rounds).toBe(3);
    expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
    expect(twice()).toEqual([]);
  });

  // the kill lands after some of a round's input files are written and before the exit 3 (one line a
  // file makes the window wide); while the run reads an output the tool is still writing (a FIFO
  // holds it there); and after the run collected some outputs, before its next round
  for (const step of ["written", "reading", "collected"] as const) {
    it(`survives a kill -9 ${step === "written" ? "while writing a round's files" : step === "reading" ? "while reading a partial output" : "after collecting"}: the online records, no request answered twice`, async () => {
      serve();
      const dir = tempDir(`cf-batch-files-kill-${step}-`);
      const sets =
        step === "reading" ? FILES : FILES.replace("}", `, max_lines: ${step === "written" ? 1 : 4}}`);
      const run = (killWhen?: () => boolean) => cli(dir, ["run", "filter", "--set", sets], env(), killWhen);
      const answered = new Set<string>();
      const answer = async (stderr: string) => {
        for (const [, input, output] of stderr.matchAll(/vllm run-batch -i (\S+) -o (\S+)/g)) {
          if (answered.has(input!)) continue;
          answered.add(input!);
          await runBatch(input!, output!, server.url, { apiKey: SECRET });
        }
      };
      if (step === "written") {
        const killed = await run(() => entries(dir).length > 0);
        expect(killed.signal).toBe("SIGKILL");
        expect(killed.stderr).not.toContain("waiting for batch");
      } else {
        const first = await run();
        expect(first.code, first.stderr).toBe(3);
        if (step === "reading") {
          const [, input, output] = /-i (\S+) -o (\S+)/.exec(first.stderr)!;
          const partial = join(dir, "partial.jsonl");
          await runBatch(input!, partial, server.url, { apiKey: SECRET, partial: 30 });
          execFileSync("mkfifo", [output!]);
          let written = false;
          const second = run(() => written);
          // opens once the run opens the output to read it; the run waits there for the rest
          const fifo = await open(output!, "w");
          await fifo.write(readFileSync(partial));
          written = true;
          expect((await second).signal).toBe("SIGKILL");
          await fifo.close().catch(() => {});
          rmSync(output!);
          renameSync(partial, output!);
          answered.add(input!);
        } else {
          await answer(first.stderr);
          const collected = () => entries(dir).some((e) => e.state === "collected");
          const killed = await run(collected);
          expect(killed.signal).toBe("SIGKILL");
          expect(entries(dir).filter((e) => e.round === 2)).toEqual([]);
        }
      }
      for (let i = 0; ; i++) {
        expect(i).toBeLessThan(6);
        const again = await run();
        if (again.code === 0) break;
        expect(again.code, again.stderr).toBe(3);
        await answer(again.stderr);
      }
      expect(await outcomeOf(dir)).toEqual({ kept: ref.reference.kept, rejected: ref.reference.rejected });
      expect(twice()).toEqual([]);
      expect(server.count).toBe(ref.reference.requests);
    });
  }

  it("exits 2 on an output file that is not JSONL (naming the file and line) and on a command without {input}", async () => {
    serve();
    const dir = tempDir("cf-batch-garbage-");
    const run = await cli(dir, ["run", "filter", "--set", FILES], env());
    expect(run.code).toBe(3);
    const [, input, output] = /-i (\S+) -o (\S+)/.exec(run.stderr)!;
    await runBatch(input!, output!, server.url, { garbage: true, apiKey: SECRET });
    const bad = await cli(dir, ["run", "filter", "--set", FILES], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${output}:2: not JSON`);
    writeFileSync(output!, "");
    const noInput = await cli(
      dir,
      ["run", "filter", "--set", "llm.scorer.batch={provider: files, command: 'vllm run-batch -o {output}'}"],
      env(),
    );
    expect(noInput.code).toBe(2);
    expect(noInput.stderr).toContain("{input}");
  });
});
