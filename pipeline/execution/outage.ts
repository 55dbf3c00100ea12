// The outage policy, the same for every stage: a sandbox that fails (down, refusing, a runner that
// throws) is asked again after a wait that doubles, and after the last try the run throws
// SandboxOutageError. The stage fails the record, never the whole stage, and the next run retries it;
// the code is never blamed for it. A stop of the run ends the tries (the outage names the last failure).
import { sleep } from "../abort.js";
import { clause } from "../errors.js";
import { SandboxOutageError } from "./errors.js";
import { DEFAULT_BACKOFF_MS, DEFAULT_SANDBOX_ATTEMPTS, type SandboxSettings } from "./settings.js";

export interface Attempted<T> {
  value: T;
  /** why the sandbox did not run it this time; undefined when it did */
  failure: string | undefined;
}

/**
 * Calls `once` until the sandbox runs it or the tries are spent; `what` names the program in the
 * outage's advice ("a python program").
 */
export async function withOutagePolicy<T>(
  once: () => Promise<Attempted<T>>,
  settings: Pick<SandboxSettings, "sandbox_attempts" | "backoff_ms">,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  const attempts = settings.sandbox_attempts ?? DEFAULT_SANDBOX_ATTEMPTS;
  const backoff = settings.backoff_ms ?? DEFAULT_BACKOFF_MS;
  let failure: string | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const tried = await once();
    if (tried.failure === undefined) return tried.value;
    failure = tried.failure;
    if (signal?.aborted || attempt === attempts) break;
    // no abort listener: hundreds of runs backing off on one signal would each add one, and a wait is short
    await sleep(backoff * 2 ** (attempt - 1));
  }
  throw new SandboxOutageError(
    `the sandbox could not run ${what} after ${attempts} ${attempts === 1 ? "try" : "tries"}: ${clause(failure || "no answer")}. ` +
      "Check the sandbox (`pnpm pipeline sandbox languages`, or the server at sandbox.url) and run again.",
  );
}
