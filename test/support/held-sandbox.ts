// Our /run_code server in front of a real sandbox, for kill -9 tests of the sandbox count: it holds
// the programs a test picks (by their code) until their client hangs up, so a kill lands while they
// are in flight, and reports one fixed execution time for every program it answers, so the busy
// times a manifest adds up are exact.
import { startSandboxServer } from "../../pipeline/sandbox/server.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/types.js";

/** The execution time every answered program reports: 125 ms, exact in binary. */
export const HELD_PROGRAM_S = 0.125;

class HoldingRunner implements CodeRunner {
  /** programs whose code matches are held */
  hold: RegExp | undefined;
  /** matching programs still to let through before holding begins */
  passing = 0;
  /** programs held now */
  held = 0;
  /** programs answered with something the sandbox ran */
  answered = 0;
  /** programs running in the sandbox now (held ones aside) */
  running = 0;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly runner: CodeRunner) {}

  async run(request: RunCodeRequest, options?: { signal?: AbortSignal }): Promise<RunCodeResponse> {
    if (this.hold?.test(request.code) && this.passing-- <= 0) {
      this.held++;
      // until the client hangs up (the server aborts the signal) or the server closes
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiting.delete(done);
          resolve();
        };
        this.waiting.add(done);
        options?.signal?.addEventListener("abort", done, { once: true });
      });
      this.held--;
      throw new Error("held until the client went away");
    }
    this.running++;
    const response = await this.runner.run(request, options).finally(() => this.running--);
    const step = response.run_result ?? response.compile_result;
    if (response.status === "SandboxError" || !step) return response;
    this.answered++;
    // one fixed time per program: in its run step when it has one, else in its compile step
    const timed = (s: RunCodeResponse["run_result"], time: number) =>
      s ? { ...s, execution_time: time } : s;
    return {
      ...response,
      compile_result: timed(response.compile_result, response.run_result ? 0 : HELD_PROGRAM_S),
      run_result: timed(response.run_result, HELD_PROGRAM_S),
    };
  }

  release(): void {
    for (const done of [...this.waiting]) done();
  }

  async close(): Promise<void> {}
}

export interface HeldSandbox {
  /** the server's base URL, for `sandbox.url` */
  url: string;
  /**
   * Holds, from now on, the programs whose code matches, after letting the first `passFirst` of them
   * through; undefined holds none.
   */
  hold(code: RegExp | undefined, passFirst?: number): void;
  /** programs held now (in flight for their client) */
  held(): number;
  /** programs answered since the start or the last `resetCount` */
  answered(): number;
  resetCount(): void;
  /** once no program is held or running: a killed client's last programs are over and counted */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the server in front of `runner` (which the caller closes). */
export async function startHeldSandbox(runner: CodeRunner): Promise<HeldSandbox> {
  const holding = new HoldingRunner(runner);
  const server = await startSandboxServer({ runner: holding, port: 0, maxBodyBytes: 1 << 22 });
  return {
    url: server.url,
    hold: (code, passFirst = 0) => {
      holding.hold = code;
      holding.passing = passFirst;
    },
    held: () => holding.held,
    answered: () => holding.answered,
    resetCount: () => {
      holding.answered = 0;
    },
    idle: async () => {
      while (holding.held > 0 || holding.running > 0) await new Promise((r) => setTimeout(r, 20));
    },
    close: async () => {
      holding.release();
      await server.close();
    },
  };
}
