// The embedded sandbox: runs SandboxFusion /run_code requests on this machine, each one in a fresh
// private run dir and fresh bubblewrap sandboxes (one for the compile step, one for the run step),
// never reusing either for another request.

import { type CgroupHost, openCgroupHost } from "./cgroup.js";
import { defaultWorkers, type SandboxConfig } from "./config.js";
import { SandboxClosedError, SandboxRequestError } from "./errors.js";
import { createHostArea, type HostArea, isRoot, removeHostArea, type SlotArea } from "./host-area.js";
import type { IsolationMode, SandboxKit } from "./isolation.js";
import { findLanguage, languageIds, unservedLanguage } from "./languages.js";
import { WorkerPool } from "./pool.js";
import { SandboxSupply, type SupplyOptions } from "./prepared.js";
import { probeIsolation, probePrepared } from "./probe.js";
import { requestBytes, sandboxErrorResponse } from "./request.js";
import { runRequest } from "./run-request.js";
import { missingToolchain } from "./toolchains.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "./types.js";

export interface EmbeddedSandboxOptions {
  /** `coreutils` runs setpriv + prlimit + GNU time and a shell instead of our helpers (tests cover both) */
  launcher?: "auto" | "coreutils";
  /** use only this isolation mode instead of the first that works (tests cover both) */
  mode?: "userns" | "setuid";
  /** false: build every sandbox when its step starts instead of ahead (tests cover both) */
  prepare?: boolean;
}

export interface IsolationReport {
  /** null: no isolation works here and untrusted code is refused (`problem` says why) */
  mode: IsolationMode | null;
  problem: string | null;
  /** our launcher, or the setpriv/prlimit/GNU time fallback */
  launcher: "built" | "coreutils";
  /** who forks the host commands: our spawner process, or this process through Node's spawn */
  spawner: "built" | "node";
  /** whether work dirs sit on size-capped tmpfs mounts (needs root); otherwise on the host's temp dir */
  workDirCapped: boolean;
  /** the cgroup version capping each run's whole process tree, or null (rlimits only) */
  cgroup: 1 | 2 | null;
  /** why there are no run cgroups, when cgroup is null */
  cgroupProblem: string | null;
  /** whether sandboxes are built ahead of their requests (needs our launcher) */
  prepared: boolean;
  /** the host uids untrusted code runs as, one per worker */
  uids: number[];
}

interface Ready {
  area: HostArea;
  mode: IsolationMode | null;
  /** why isolation cannot run, when mode is null */
  problem: string | null;
  cgroups: CgroupHost | null;
  cgroupProblem: string | null;
  /** per slot, when sandboxes are prepared ahead */
  supplies: SandboxSupply[] | null;
}

export class EmbeddedSandbox implements CodeRunner {
  private readonly pool: WorkerPool;
  private ready: Promise<Ready> | null = null;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    readonly config: SandboxConfig,
    private readonly options: EmbeddedSandboxOptions = {},
  ) {
    this.pool = new WorkerPool(config.workers ?? defaultWorkers(), config.queue);
  }

  /** Whether a new run would be refused right now (every worker busy, the queue full). */
  saturated(): boolean {
    return this.pool.busy >= this.pool.size && this.pool.queued >= this.pool.queueLimit;
  }

  /** Runs in progress and waiting, for health checks and tests. */
  stats(): { workers: number; busy: number; queued: number } {
    return { workers: this.pool.size, busy: this.pool.busy, queued: this.pool.queued };
  }

  /** The isolation this sandbox uses (`null` when it cannot isolate and refuses code). */
  async isolation(): Promise<IsolationReport> {
    const { mode, problem, area, cgroups, cgroupProblem, supplies } = await this.prepare();
    return {
      mode,
      problem,
      launcher: area.kit.launcher ? "built" : "coreutils",
      spawner: area.kit.spawner ? "built" : "node",
      workDirCapped: area.slots.every((slot) => slot.mounted),
      cgroup: cgroups?.version ?? null,
      cgroupProblem,
      prepared: supplies !== null,
      uids: area.slots.map((slot) => slot.uid),
    };
  }

  /**
   * Resolves once the sandboxes being built ahead for the next requests are ready, so a benchmark
   * can time what follows without our background work competing for the cores.
   */
  async settled(): Promise<void> {
    const ready = await this.prepare();
    await Promise.all((ready.supplies ?? []).map((supply) => supply.prepared()));
  }

  async run(request: RunCodeRequest, options?: { signal?: AbortSignal }): Promise<RunCodeResponse> {
    if (this.closed) throw new SandboxClosedError();
    const work = this.runTracked(request, options?.signal);
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pool.close();
    await Promise.allSettled([...this.inFlight]);
    if (this.ready) {
      const ready = await this.ready.catch(() => null);
      // a sandbox that would not go (reported) must not keep the rest from being cleaned up
      const closed = await Promise.allSettled((ready?.supplies ?? []).map((supply) => supply.close()));
      await ready?.cgroups?.close();
      if (ready) await removeHostArea(ready.area);
      const failed = closed.find((outcome) => outcome.status === "rejected");
      if (failed) throw failed.reason;
    }
  }

  private prepare(): Promise<Ready> {
    this.ready ??= this.setUp();
    return this.ready;
  }

  private async setUp(): Promise<Ready> {
    const isolated = this.config.isolation === "bwrap";
    const area = await createHostArea({
      slots: this.pool.size,
      uidBase: this.config.uid_base,
      workDirMb: this.config.limits.work_dir_mb,
      tmpfs: isolated,
      launcher: this.options.launcher !== "coreutils",
    });
    let cgroups: CgroupHost | null = null;
    let cgroupProblem: string | null = "sandbox.cgroups is off";
    if (this.config.cgroups === "auto") {
      const opened = await openCgroupHost(this.config.cgroup_parent);
      cgroups = opened.host;
      cgroupProblem = opened.problem;
    }
    if (!isolated) {
      process.emitWarning(
        "sandbox.isolation is 'none': model-written code runs directly on this machine as this user, with only rlimits. Use it for trusted code only; set sandbox.isolation: bwrap for anything else.",
        { code: "CODEFEEDBACK_SANDBOX_UNISOLATED" },
      );
      return { area, mode: "none", problem: null, cgroups, cgroupProblem, supplies: null };
    }
    const probe = (kit: SandboxKit, withCgroups: CgroupHost | null) =>
      probeIsolation(area.slots[0]!, kit, withCgroups, this.options.mode);
    let result = await probe(area.kit, cgroups);
    const fallbacks: [SandboxKit, CgroupHost | null][] = [];
    // e.g. a host that will not let us open our spawner's pipes through /proc: Node forks instead
    if (area.kit.spawner) fallbacks.push([{ ...area.kit, spawner: null }, cgroups]);
    // e.g. a temp dir mounted noexec, where our cached helpers cannot run: the stock tools can
    if (area.kit.launcher || area.kit.enter)
      fallbacks.push([{ ...area.kit, launcher: null, enter: null, spawner: null }, cgroups]);
    if (cgroups) fallbacks.push([area.kit, null]);
    for (const [kit, withCgroups] of fallbacks) {
      if (result.mode !== null) break;
      const fallback = await probe(kit, withCgroups);
      if (fallback.mode === null) continue;
      if (cgroups && !withCgroups) {
        await cgroups.close();
        cgroups = null;
        cgroupProblem = `commands could not enter their cgroups (${result.problem})`;
      }
      area.kit = kit;
      result = fallback;
    }
    const supplies = result.mode !== null ? await this.supplies(area, result.mode, cgroups) : null;
    return { area, mode: result.mode, problem: result.problem, cgroups, cgroupProblem, supplies };
  }

  /** Per-slot supplies of sandboxes built ahead, where our launcher runs and the probe agrees. */
  private async supplies(
    area: HostArea,
    mode: Exclude<IsolationMode, "none">,
    cgroups: CgroupHost | null,
  ): Promise<SandboxSupply[] | null> {
    const { launcher } = area.kit;
    if (!launcher || this.options.prepare === false) return null;
    const limits = this.config.limits;
    const options = (slot: SlotArea): SupplyOptions => ({
      mode,
      slot,
      kit: { ...area.kit, launcher },
      cgroups,
      memoryBytes: (limits.max_memory_mb + limits.memory_headroom_mb) * 1024 * 1024,
      // as in step.ts: the tree's cap binds first, so a refused fork is counted
      processes: limits.processes,
      tmpMb: limits.tmp_mb,
      owner: isRoot() ? slot.uid : null,
    });
    if (!(await probePrepared(options(area.slots[0]!)))) return null;
    return area.slots.map((slot) => new SandboxSupply(options(slot)));
  }

  private async runTracked(request: RunCodeRequest, signal?: AbortSignal): Promise<RunCodeResponse> {
    const spec = findLanguage(String(request.language ?? ""));
    const unserved = spec ? undefined : unservedLanguage(String(request.language ?? ""));
    if (unserved) {
      return sandboxErrorResponse(
        `${request.language} is not served by this sandbox: ${unserved}. Point sandbox.url at a SandboxFusion server for it; this one runs: ${languageIds().join(", ")}`,
        "toolchain_missing",
      );
    }
    if (!spec) {
      return sandboxErrorResponse(
        `unknown language ${JSON.stringify(request.language)}; the sandbox runs: ${languageIds().join(", ")}`,
        "unknown_language",
      );
    }
    const bytes = requestBytes(request);
    if (bytes > this.config.max_request_bytes) {
      return sandboxErrorResponse(
        `request too large: ${bytes} bytes of code, stdin and files, over sandbox.max_request_bytes (${this.config.max_request_bytes}); send smaller inputs or raise the limit`,
        "request_too_large",
      );
    }
    const missing = missingToolchain(spec);
    if (missing.length > 0) {
      return sandboxErrorResponse(
        `${spec.id} is not available here: ${missing.join(", ")} not found. Install Debian package(s) ${spec.debianPackages.join(" ")} (scripts/install.sh installs every toolchain), or point sandbox.url at a server that has it.`,
        "toolchain_missing",
      );
    }
    const ready = await this.prepare();
    if (ready.mode === null) {
      return sandboxErrorResponse(
        `refusing to run untrusted code: bubblewrap isolation does not work here (${ready.problem}). Install bubblewrap (Debian package bubblewrap) and allow user namespaces, or run as root; set sandbox.isolation: none only for trusted code.`,
        "isolation_unavailable",
      );
    }
    const slotIndex = await this.pool.acquire(signal);
    try {
      const slot = ready.area.slots[slotIndex]!;
      const response = await runRequest(
        {
          config: this.config,
          mode: ready.mode,
          slot,
          kit: ready.area.kit,
          cgroups: ready.cgroups,
          supply: ready.supplies?.[slot.index] ?? null,
        },
        spec,
        request,
        signal,
      );
      // the caller gave up: a result killed half-way must not pass for a time limit
      signal?.throwIfAborted();
      return response;
    } catch (error) {
      if (error instanceof SandboxRequestError) return sandboxErrorResponse(error.message, error.problem);
      throw error;
    } finally {
      this.pool.release(slotIndex);
    }
  }
}
