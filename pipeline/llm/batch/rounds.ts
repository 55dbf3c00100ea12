// Batch mode, invisible to stages: a batch role's cache miss is queued and its caller waits; once
// every record the stage has in flight waits on an answer (or a file is full, or nothing new came for
// `settle_s`), the queue goes out as one round of batch files. Answers go into the response cache
// and wake their callers, so dialogues advance together, one step a round, and records commit as
// they finish, exactly as online. `files` stops the run (exit 3) until the files are answered.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { onAbort, sleep } from "../../abort.js";
import { UserError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { CachedAnswer, ResponseCache } from "../cache.js";
import { type LlmConfig, ROLE_NAMES, roleConfig } from "../config.js";
import { type Env, resolveEndpoint } from "../endpoint.js";
import { LlmAbortedError, LlmAttemptError, LlmRequestError } from "../errors.js";
import { type BatchConfig, batchCommand } from "./config.js";
import { type BatchEntry, BatchLedger } from "./ledger.js";
import { type BatchRequest, type BatchResult, parseResults, splitIntoFiles } from "./lines.js";
import { OpenAiBatches, type ProviderBatch } from "./openai.js";

/** What the runner tells about the stage it runs: records in flight, and whether more are coming. */
export interface BatchStageView {
  /** records started and not finished */
  busy(): number;
  /** true while the runner is still admitting records (the round is not complete yet) */
  feeding(): boolean;
  /** the runner waits for a free slot: batch mode admits more, so look again */
  wake(): void;
}

/** A `files` round written and not answered yet, or a `--no-wait` round submitted: run again later. */
export class BatchWaitingError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 3 });
  }
}

interface Waiter {
  resolve(answer: CachedAnswer): void;
  reject(error: unknown): void;
}

interface Pending {
  /** undefined for a request of an earlier run's batch that no record has asked for again yet */
  request: BatchRequest | undefined;
  role: string;
  waiters: Set<Waiter>;
  /** the entry it was sent in, while it is */
  entry?: BatchEntry;
}

const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);

/**
 * The stage's batch work, as the runner sees it (through Services): `begin` before a stage runs,
 * `watch` and `poke` while it runs, `end` after it; batch roles send their misses to `request`.
 */
export class LlmBatches {
  /** callers of batch roles waiting for an answer (BatchRole counts them) */
  waiting = 0;
  private readonly providers = new Map<string, OpenAiBatches>();
  private ledger: BatchLedger | undefined;
  private label = "";
  private view: BatchStageView | undefined;
  private queued = new Map<string, Pending>();
  private submitted = new Map<string, Pending>();
  /** request id -> times a batch failed it, and the provider's last reason */
  private failures = new Map<string, { count: number; reason: string }>();
  /** entry id -> its requests' ids */
  private readonly idsOf = new Map<string, Set<string>>();
  /** `--no-wait`: entries submitted and left to the provider in this run */
  private readonly parked = new Set<string>();
  private stopped: unknown;
  /** some request of the current stage went to a batch role */
  engaged = false;
  private seq = 0;
  private round = 0;
  private settleTimer: NodeJS.Timeout | undefined;
  private checkScheduled = false;
  private stop = new AbortController();
  /** the submissions and polls running */
  private readonly tracking = new Set<Promise<void>>();

  constructor(
    private readonly config: LlmConfig,
    private readonly deps: { cache: () => ResponseCache; log: Logger; noWait: boolean; env: Env },
  ) {}

  batchOf(role: string): BatchConfig | undefined {
    return roleConfig(this.config, role)?.batch;
  }

  /** records a stage may keep in flight once one of its requests went to a batch role */
  get admit(): number {
    return Math.max(1, ...ROLE_NAMES.map((role) => this.batchOf(role)?.max_records ?? 1));
  }

  /** Before a stage runs: reads what its earlier runs sent; throws (exit 3) while a `files` batch is unanswered. */
  async begin(stageDir: string, label: string): Promise<void> {
    this.ledger = new BatchLedger(stageDir);
    this.label = label;
    this.view = undefined;
    this.queued = new Map();
    this.submitted = new Map();
    this.failures = new Map();
    this.parked.clear();
    this.stopped = undefined;
    this.engaged = false;
    this.stop = new AbortController();
    const entries = this.ledger.entries();
    this.seq = entries.length;
    this.round = entries.reduce((most, e) => Math.max(most, e.round), 0);
    const unanswered: BatchEntry[] = [];
    for (const entry of entries) {
      if (entry.state === "collected") {
        this.noteFailures(entry);
        continue;
      }
      const batch = this.batchOf(entry.role);
      // the role went online (or to the other provider): its records ask again the role's way now
      if (!batch || batch.provider !== entry.provider) continue;
      for (const id of this.ids(entry)) {
        this.submitted.set(id, {
          request: undefined,
          role: entry.role,
          waiters: new Set(),
          entry,
        });
      }
      if (entry.provider === "files") {
        if (existsSync(this.ledger.path(entry.output))) await this.collectFile(entry);
        else unanswered.push(entry);
      } else {
        this.track(entry, undefined);
      }
    }
    if (unanswered.length > 0) throw this.waitingFor(unanswered);
  }

  /** A record-wise stage's view, for deciding when a round is complete. */
  watch(view: BatchStageView): void {
    this.view = view;
  }

  /** Something changed in the stage (a record finished, the input ended). */
  poke(): void {
    if (this.checkScheduled) return;
    this.checkScheduled = true;
    // after the callbacks of this turn: a record whose answer was cached has moved on by then
    setImmediate(() => {
      this.checkScheduled = false;
      this.check();
    });
  }

  /** After the stage, however it ended: stops polling (batches left running are found next time). */
  end(): void {
    this.stop.abort();
    this.halt(new LlmAbortedError("batch"));
    this.view = undefined;
    this.ledger = undefined;
  }

  /** A batch role's cache miss: resolves with the answer once a batch brought it (and it is cached). */
  request(role: string, request: BatchRequest, signal: AbortSignal): Promise<CachedAnswer> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (!this.ledger) {
      return Promise.reject(
        new UserError(
          `llm role '${role}': llm.${role}.batch works for the stages of \`pnpm pipeline run\` and for \`pnpm pipeline eval model\` only; remove it from the config to use the role here`,
        ),
      );
    }
    const cached = this.deps.cache().get(Buffer.from(request.id, "hex"));
    if (cached) return Promise.resolve(cached);
    let pending = this.submitted.get(request.id) ?? this.queued.get(request.id);
    if (!pending) {
      const failed = this.failures.get(request.id);
      const batch = this.batchOf(role)!;
      if (failed && failed.count > batch.retries) return Promise.reject(batchFailure(role, failed));
      pending = { request, role, waiters: new Set() };
      this.queued.set(request.id, pending);
      if (!this.engaged) {
        this.engaged = true;
        this.view?.wake();
      }
      this.settle(batch.settle_s);
    }
    pending.request ??= request;
    const waiting = pending;
    let stopWatching: () => void = () => {};
    const answer = new Promise<CachedAnswer>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      stopWatching = onAbort(signal, () => {
        waiting.waiters.delete(waiter);
        reject(new LlmAbortedError(role));
      });
      waiting.waiters.add(waiter);
      this.poke();
    });
    return answer.finally(() => stopWatching());
  }

  private check(): void {
    if (this.stopped || !this.ledger) return;
    const view = this.view;
    const settled = view !== undefined && !view.feeding() && this.waiting >= view.busy();
    if (this.queued.size > 0) {
      if (settled || this.full()) this.flush();
      return;
    }
    // `--no-wait`: every record waits on batches left to the provider: this run is done
    if (settled && this.deps.noWait && this.submitted.size > 0 && this.parked.size > 0) {
      const waitingOn = new Set([...this.submitted.values()].map((p) => p.entry?.id));
      if ([...waitingOn].every((id) => id !== undefined && this.parked.has(id))) {
        this.halt(
          new BatchWaitingError(
            `${this.label}: waiting for batch: ${waitingOn.size} batch(es) submitted and left to the provider ` +
              "(--no-wait). Run the same command (or `pnpm pipeline status --refresh`) later to collect them.",
          ),
        );
      }
    }
  }

  /** Some role's queue fills a whole file already. */
  private full(): boolean {
    const counts = new Map<string, number>();
    for (const p of this.queued.values()) {
      const n = (counts.get(p.role) ?? 0) + 1;
      counts.set(p.role, n);
      if (n >= this.batchOf(p.role)!.max_lines) return true;
    }
    return false;
  }

  /** Sends what is queued as one round: files per role and model, within the limits. */
  private flush(): void {
    this.settle(undefined);
    const ledger = this.ledger;
    if (this.stopped || !ledger || this.queued.size === 0) return;
    const items = [...this.queued.values()];
    this.queued = new Map();
    this.round++;
    const byRole = new Map<string, Pending[]>();
    for (const p of items) byRole.set(p.role, [...(byRole.get(p.role) ?? []), p]);
    const written: BatchEntry[] = [];
    try {
      for (const [role, pendings] of byRole) {
        const batch = this.batchOf(role)!;
        const { files, tooLarge } = splitIntoFiles(
          pendings.map((p) => p.request!),
          { maxLines: batch.max_lines, maxBytes: batch.max_bytes },
        );
        const byId = new Map(pendings.map((p) => [p.request!.id, p]));
        for (const request of tooLarge) {
          const error = new LlmRequestError(
            role,
            0,
            new LlmAttemptError(
              "bad-request",
              `the request is larger than llm.${role}.batch.max_bytes (${batch.max_bytes} bytes): no batch file can hold it`,
            ),
          );
          for (const w of byId.get(request.id)!.waiters) w.reject(error);
        }
        for (const file of files) {
          const seq = this.seq++;
          const id = createHash("sha256")
            .update(`${seq}\n${role}\n${file.model}\n${file.ids.join("\n")}`)
            .digest("hex")
            .slice(0, 24);
          const entry: BatchEntry = {
            id,
            role,
            model: file.model,
            provider: batch.provider,
            round: this.round,
            input: `${id}.input.jsonl`,
            output: `${id}.output.jsonl`,
            total: file.ids.length,
            createdAt: new Date().toISOString(),
            state: batch.provider === "files" ? "waiting" : "prepared",
          };
          ledger.writeInput(entry, file.text);
          ledger.save(entry);
          this.idsOf.set(id, new Set(file.ids));
          for (const requestId of file.ids) {
            const p = byId.get(requestId)!;
            p.entry = entry;
            this.submitted.set(requestId, p);
          }
          written.push(entry);
          if (batch.provider === "openai") this.track(entry, file.text);
        }
      }
    } catch (error) {
      this.halt(error);
      return;
    }
    const files = written.filter((e) => e.provider === "files");
    if (files.length > 0) this.halt(this.waitingFor(files));
  }

  /** `openai`: submits the entry (unless an earlier run did), polls it, and collects its results. */
  private track(entry: BatchEntry, text: string | undefined): void {
    const ledger = this.ledger!;
    const batch = this.batchOf(entry.role)!;
    const signal = this.stop.signal;
    const run = async () => {
      const provider = this.provider(entry.role);
      await provider.check();
      if (!entry.batchId && text === undefined) {
        // an earlier run may have created it and died before writing down its id
        const found = await provider.findBatch(entry.id);
        if (found) this.note(entry, found);
      }
      if (!entry.batchId) {
        if (!entry.fileId) {
          const existing = text === undefined ? await provider.findFile(entry.input) : undefined;
          entry.fileId =
            existing ??
            (await provider.upload(entry.input, text ?? readFileSync(ledger.path(entry.input), "utf8")));
          ledger.save(entry);
        }
        if (signal.aborted) return;
        this.note(entry, await provider.create(entry.fileId, entry.id, batch.completion_window));
      }
      let wait = batch.poll_s * 1000;
      for (;;) {
        if (signal.aborted) return;
        let state: ProviderBatch;
        try {
          state = await provider.retrieve(entry.batchId!);
        } catch (error) {
          // a lost poll says nothing about the batch: ask again later
          this.deps.log.warn(
            `llm role '${entry.role}': polling batch ${entry.batchId} failed (${(error as Error).message}); polling again`,
          );
          await sleep(wait, signal).catch(() => {});
          continue;
        }
        if (signal.aborted) return;
        this.note(entry, state);
        if (TERMINAL.has(state.status)) {
          await this.collectBatch(entry, state, provider);
          return;
        }
        if (this.deps.noWait) {
          this.parked.add(entry.id);
          this.poke();
          return;
        }
        await sleep(wait, signal).catch(() => {});
        wait = Math.min(wait * 2, batch.max_poll_s * 1000);
      }
    };
    const running = run().catch((error: unknown) => {
      if (!signal.aborted) this.halt(error);
    });
    this.tracking.add(running);
    void running.finally(() => this.tracking.delete(running));
  }

  /**
   * `status --refresh`: asks the provider once about each batch the stage left running and puts the
   * answers of those that ended into the cache, as its next run would.
   */
  async refresh(stageDir: string, label: string): Promise<void> {
    try {
      await this.begin(stageDir, label);
    } catch (error) {
      // a `files` batch still waiting for its output is what status shows anyway
      if (!(error instanceof BatchWaitingError)) throw error;
    }
    try {
      while (this.tracking.size > 0) await Promise.all([...this.tracking]);
      if (this.stopped && !(this.stopped instanceof BatchWaitingError)) throw this.stopped;
    } finally {
      this.end();
    }
  }

  /** Writes down what the provider says of an entry's batch, when it changed. */
  private note(entry: BatchEntry, state: ProviderBatch): void {
    const counts = state.request_counts;
    const changed =
      entry.batchId !== state.id ||
      entry.state !== state.status ||
      entry.done !== counts?.completed ||
      (entry.failed === undefined && counts?.failed);
    entry.batchId = state.id;
    entry.fileId ??= state.input_file_id;
    if (!TERMINAL.has(state.status)) entry.state = state.status as BatchEntry["state"];
    if (counts) entry.done = counts.completed;
    if (changed) this.ledger?.save(entry);
  }

  private async collectBatch(
    entry: BatchEntry,
    state: ProviderBatch,
    provider: OpenAiBatches,
  ): Promise<void> {
    const results: BatchResult[] = [];
    for (const [fileId, what] of [
      [state.output_file_id, "output"],
      [state.error_file_id, "error"],
    ] as const) {
      if (!fileId) continue;
      results.push(
        ...parseResults(
          await provider.content(fileId),
          `batch ${state.id}'s ${what} file ${fileId}`,
          entry.model,
        ),
      );
    }
    const why =
      state.status === "failed"
        ? `batch failed: ${(state.errors?.data ?? []).map((e) => [e.code, e.message].filter(Boolean).join(": ")).join("; ") || "no reason given"}`
        : state.status === "completed"
          ? "missing from the batch's output"
          : `batch ${state.status}`;
    await this.ingest(entry, results, why, state.status);
  }

  /** `files`: reads the entry's output file, partial or not. */
  private async collectFile(entry: BatchEntry): Promise<void> {
    const path = this.ledger!.path(entry.output);
    await this.ingest(
      entry,
      parseResults(readFileSync(path, "utf8"), path, entry.model),
      undefined,
      "completed",
    );
  }

  /**
   * Puts the answers into the cache, then writes the entry down as collected, then wakes the callers:
   * a kill between the two leaves answers that are simply found in the cache. Failed lines are
   * queued again (alone) up to `retries` times; lines missing from a `files` output go to the next file.
   */
  private async ingest(
    entry: BatchEntry,
    results: BatchResult[],
    missing: string | undefined,
    ended: string,
  ): Promise<void> {
    const ids = this.ids(entry);
    const cache = this.deps.cache();
    const seen = new Set<string>();
    const answers: { id: string; answer: CachedAnswer }[] = [];
    const failed: Record<string, string> = {};
    let unknown = 0;
    for (const result of results) {
      if (!ids.has(result.id)) {
        unknown++;
        continue;
      }
      if (seen.has(result.id)) continue;
      seen.add(result.id);
      if ("answer" in result) answers.push(result);
      else failed[result.id] = result.failure;
    }
    if (unknown > 0) {
      this.deps.log.warn(
        `llm role '${entry.role}': batch ${entry.batchId ?? entry.output} has ${unknown} result(s) for requests it was not sent; ignored`,
      );
    }
    if (missing !== undefined) for (const id of ids) if (!seen.has(id)) failed[id] = missing;
    await Promise.all(answers.map(({ id, answer }) => cache.putSoon(Buffer.from(id, "hex"), answer)));
    Object.assign(entry, { state: "collected", done: answers.length, failed, ended });
    this.ledger?.save(entry);
    this.noteFailures(entry);
    const batch = this.batchOf(entry.role);
    for (const { id, answer } of answers) {
      const p = this.take(id, entry);
      for (const w of p?.waiters ?? []) w.resolve(answer);
    }
    for (const id of ids) {
      if (seen.has(id) && !(id in failed)) continue;
      const p = this.take(id, entry);
      if (!p || p.waiters.size === 0) continue;
      const failure = this.failures.get(id);
      if (failure && batch && failure.count > batch.retries) {
        const error = batchFailure(entry.role, failure);
        for (const w of p.waiters) w.reject(error);
      } else {
        p.entry = undefined;
        this.queued.set(id, p);
      }
    }
    if (this.queued.size > 0) this.settle(batch?.settle_s ?? 30);
    this.poke();
  }

  private take(id: string, entry: BatchEntry): Pending | undefined {
    const p = this.submitted.get(id);
    if (!p || p.entry?.id !== entry.id) return undefined;
    this.submitted.delete(id);
    return p;
  }

  private noteFailures(entry: BatchEntry): void {
    for (const [id, reason] of Object.entries(entry.failed ?? {})) {
      const failure = this.failures.get(id) ?? { count: 0, reason };
      failure.count++;
      failure.reason = reason;
      this.failures.set(id, failure);
    }
  }

  private ids(entry: BatchEntry): Set<string> {
    let ids = this.idsOf.get(entry.id);
    if (!ids) {
      ids = new Set();
      const path = this.ledger!.path(entry.input);
      if (existsSync(path)) {
        for (const line of readFileSync(path, "utf8").split("\n")) {
          if (line) ids.add((JSON.parse(line) as { custom_id: string }).custom_id);
        }
      }
      this.idsOf.set(entry.id, ids);
    }
    return ids;
  }

  private provider(role: string): OpenAiBatches {
    let provider = this.providers.get(role);
    if (!provider) {
      provider = new OpenAiBatches(resolveEndpoint(this.config, role, this.deps.env), this.deps.log);
      this.providers.set(role, provider);
    }
    return provider;
  }

  private waitingFor(entries: BatchEntry[]): BatchWaitingError {
    const ledger = this.ledger!;
    const lines = entries.map((e) => {
      const batch = this.batchOf(e.role)!;
      return `  ${batchCommand(batch, ledger.path(e.input), ledger.path(e.output), e.model)}`;
    });
    const requests = entries.reduce((n, e) => n + e.total, 0);
    return new BatchWaitingError(
      `${this.label}: waiting for batch: ${requests} requests in ${entries.length} file(s) under ${ledger.dir}. ` +
        `Answer them, then run the same command again:\n${lines.join("\n")}`,
    );
  }

  /** What is queued goes out after `seconds` without a new request (undefined: not by the clock). */
  private settle(seconds: number | undefined): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = seconds === undefined ? undefined : setTimeout(() => this.flush(), seconds * 1000);
  }

  /** Stops the stage's batch work: every caller waiting, and every later one, gets `error`. */
  private halt(error: unknown): void {
    this.stopped ??= error;
    this.settle(undefined);
    for (const map of [this.queued, this.submitted]) {
      for (const p of map.values()) for (const w of p.waiters) w.reject(this.stopped);
      map.clear();
    }
  }
}

function batchFailure(role: string, failure: { count: number; reason: string }): LlmRequestError {
  return new LlmRequestError(role, failure.count, new LlmAttemptError("batch-failed", failure.reason));
}
