// Hostile programs the sandbox must contain: their shape and the checks they share. Each one tries
// one escape or exhaustion and says what it got; `check` asserts the run was contained and reported
// with the right status. Programs print "blocked" when the attempt failed the way isolation should
// make it fail, and "ESCAPED" otherwise. The programs are in hostile-escapes.ts and
// hostile-exhaustion.ts.
import { expect } from "vitest";
import type { RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/index.js";

export interface HostileContext {
  /** a TCP server on the host's 127.0.0.1 the sandbox must not reach */
  canaryPort: number;
  /** a UDP socket on the host's 127.0.0.1 that must receive nothing */
  udpCanaryPort: number;
  /** a value only the host's environment and a host file hold */
  secret: string;
  /** a host file holding the secret, outside any sandbox */
  secretFile: string;
  /** this repository's directory on the host */
  projectDir: string;
  /** the test process's host pid */
  hostPid: number;
  limits: {
    maxOutputBytes: number;
    workDirMb: number;
    tmpMb: number;
    processes: number;
    memoryMb: number;
    memoryHeadroomMb: number;
  };
}

export interface HostileProgram {
  name: string;
  /** only meaningful (and only safe to run) when work dirs are size-capped tmpfs mounts */
  needsCappedWorkDir?: boolean;
  /** only meaningful when each run's process tree sits in memory + pids cgroups (root) */
  needsCgroup?: boolean;
  request(ctx: HostileContext): RunCodeRequest;
  check(response: RunCodeResponse, ctx: HostileContext): void;
}

export const py = (code: string) => ({ language: "python", code });

/** Forks sleeping children until the kernel refuses, then prints how many it got ("forked N"). */
export const FORK_UNTIL_REFUSED = `import os, time
n = 0
try:
    while n < 100000:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError: pass
print("forked", n)`;
export const sh = (code: string) => ({ language: "bash", code });

/** The program ran to the end, reported its attempt as blocked, and never leaked the secret. */
export function blocked(response: RunCodeResponse, ctx: HostileContext): void {
  const out = `${response.run_result?.stdout ?? ""}${response.run_result?.stderr ?? ""}`;
  expect(out).not.toContain("ESCAPED");
  expect(out).not.toContain(ctx.secret);
  expect(response.run_result?.stdout ?? "").toContain("blocked");
  expect(response.status).toBe("Success");
}

export function notLeaked(response: RunCodeResponse, ctx: HostileContext): void {
  expect(JSON.stringify(response)).not.toContain(ctx.secret);
}

/** Ended by us or by a limit: a Failed run, never a SandboxError, never a Success. */
export function failedContained(response: RunCodeResponse): void {
  expect(response.status).toBe("Failed");
  expect(response.run_result).not.toBeNull();
}

export function timedOut(response: RunCodeResponse): void {
  expect(response.status).toBe("Failed");
  expect(response.run_result?.status).toBe("TimeLimitExceeded");
}
