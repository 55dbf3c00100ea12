// Sandboxes made ahead of their requests: building one (a fork, namespaces, mounts, seccomp, joining
// cgroups, which waits for a kernel RCU grace period) costs milliseconds a short program would wait
// for. So after a request, the next one's run dir and first sandbox are built in the background, and
// during a compile, the sandbox for its run; each waits, unprivileged, for its orders on fd 4
// (launcher.c --wait). Nothing is reused: each serves one step and is thrown away, used or not.
import type { CgroupHost, RunCgroup } from "./cgroup.js";
import { HostProcess, UNBUILT_KILL_DEADLINE_MS } from "./command.js";
import { SandboxRequestError } from "./errors.js";
import type { SlotArea } from "./host-area.js";
import { enterCgroups, type IsolationMode, prepareSandbox, type SandboxKit } from "./isolation.js";
import { RunDirectory } from "./workdir.js";

/** One sandbox waiting for its command. */
export interface PreparedSandbox {
  process: HostProcess;
  cgroup: RunCgroup | null;
}

export interface SupplyOptions {
  mode: Exclude<IsolationMode, "none">;
  slot: SlotArea;
  kit: SandboxKit & { launcher: string };
  cgroups: CgroupHost | null;
  /** cgroup limits until the request's own are known */
  memoryBytes: number;
  processes: number;
  tmpMb: number;
  /** owner of run dirs (the slot's uid when we are root) */
  owner: number | null;
}

/** Builds one sandbox around `dir` now; it is ready when its launcher reads fd 4. */
export function prepareSandboxFor(dir: RunDirectory, options: SupplyOptions): PreparedSandbox {
  const { slot, kit } = options;
  let cgroup: RunCgroup | null = null;
  try {
    let host = prepareSandbox(
      options.mode,
      {
        hostWorkDir: dir.work,
        // its launcher reports usage on the status pipe, out of the program's reach
        hostUsageFile: null,
        tmpMb: options.tmpMb,
        uid: slot.uid,
        // every tool: which one the command will need is not known yet
        readOnlyBinds: kit.toolBinds,
      },
      kit,
    );
    if (options.cgroups) {
      cgroup = options.cgroups.createRun({ memoryBytes: options.memoryBytes, processes: options.processes });
      host = enterCgroups(host, cgroup.procsFiles, kit);
    }
    return { process: HostProcess.spawn(host), cgroup };
  } catch (error) {
    void cgroup?.remove();
    throw error;
  }
}

/**
 * How long a stopped sandbox may take to be gone: its kill deadline, then the kernel's SIGKILL.
 * Only a process the kernel cannot kill (stuck in a system call) outlasts it.
 */
const DISPOSE_DEADLINE_MS = UNBUILT_KILL_DEADLINE_MS + 20_000;

/**
 * Throws away a sandbox: stops it if it never ran, and removes its cgroups (killing anything left in
 * them). Never waits for ever: a sandbox still there at the deadline is left to
 * its cgroup's kill and reported.
 */
export async function disposeSandbox(sandbox: PreparedSandbox): Promise<void> {
  sandbox.process.kill();
  let deadline: NodeJS.Timeout | undefined;
  const gone = await Promise.race([
    sandbox.process.settled().then(() => true),
    new Promise<false>((resolve) => {
      deadline = setTimeout(() => resolve(false), DISPOSE_DEADLINE_MS);
    }),
  ]);
  clearTimeout(deadline);
  await sandbox.cgroup?.remove();
  if (!gone) {
    throw new SandboxRequestError(
      "internal",
      `a sandbox built ahead (bwrap, host pid ${sandbox.process.pid ?? "unknown"}) was still there ${DISPOSE_DEADLINE_MS / 1000} s after it was stopped; look for a process of the sandbox's uid stuck in the kernel (ps -eo pid,stat,wchan,args) and report it`,
    );
  }
}

function warn(error: unknown): void {
  process.emitWarning(`sandbox: ${(error as Error).message}`, { code: "CODEFEEDBACK_SANDBOX_LEFTOVER" });
}

/** A slot's supply of prepared run dirs and sandboxes. */
export class SandboxSupply {
  private next: { dir: RunDirectory; sandbox: PreparedSandbox } | null = null;
  private closed = false;
  /** a prepareNext scheduled but not run yet */
  private soon: Promise<void> | null = null;

  constructor(private readonly options: SupplyOptions) {}

  /** The run dir and first sandbox for the slot's next request, prepared ahead when possible. */
  takeRun(): { dir: RunDirectory; sandbox: PreparedSandbox } {
    const next = this.next;
    this.next = null;
    if (next?.sandbox.process.usable) return next;
    if (next) void this.discard(next).catch(warn);
    const dir = this.newDir();
    return { dir, sandbox: prepareSandboxFor(dir, this.options) };
  }

  /** Starts building the slot's following request's run dir and sandbox. */
  prepareNext(): void {
    if (this.closed || this.next) return;
    const dir = this.newDir();
    try {
      this.next = { dir, sandbox: prepareSandboxFor(dir, this.options) };
    } catch {
      // the next request will try again, on its own time
      void dir.remove();
    }
  }

  /** Another sandbox around `dir`, for the run step that follows a compile. */
  prepareFor(dir: RunDirectory): PreparedSandbox {
    return prepareSandboxFor(dir, this.options);
  }

  /** Builds the following request's sandbox once the current turn of the event loop is done. */
  prepareNextSoon(): void {
    this.soon ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.soon = null;
        this.prepareNext();
        resolve();
      }),
    );
  }

  /** Resolves when the sandbox prepared for the next request (if any) is built and waiting. */
  async prepared(): Promise<void> {
    await this.soon;
    await this.next?.sandbox.process.ready();
  }

  async close(): Promise<void> {
    this.closed = true;
    const next = this.next;
    this.next = null;
    if (next) await this.discard(next);
  }

  private newDir(): RunDirectory {
    return RunDirectory.create(this.options.slot.runsDir, this.options.owner, { withTmp: false });
  }

  private async discard(prepared: { dir: RunDirectory; sandbox: PreparedSandbox }): Promise<void> {
    try {
      await disposeSandbox(prepared.sandbox);
    } finally {
      await prepared.dir.remove();
    }
  }
}
