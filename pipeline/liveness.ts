// Whether anything answers HTTP at a server's address: what tells a server that accepts connections
// and never answers (a hung process, a port forwarded to nothing) from a slow one, whose requests may
// well take longer than a probe. Any status counts as an answer, a 404 included; only silence does not.
import { onAbort } from "./abort.js";
import { unreached } from "./errors.js";

const MIN_PROBE_MS = 5000;

/** What a probe of servers that never answered found: nothing answered, why, and how often it tried. */
export interface Silence {
  reason: string;
  attempts: number;
}

/**
 * Sends `GET url` to each of `urls` until one answers or `probeMs` (at least 5 s) have passed; a
 * silence when none did.
 * Undefined as well when a request fails in a way that is not silence (a URL fetch refuses): the
 * probe then cannot tell, and says nothing.
 */
export async function silentFor(
  urls: readonly string[],
  probeMs: number,
  /** ends the probe early, with no verdict (a server answered the caller meanwhile) */
  settled: () => boolean = () => false,
): Promise<Silence | undefined> {
  // a server answering a GET in a few seconds is no sign of death, even under a shorter probe
  const ms = Math.max(probeMs, MIN_PROBE_MS);
  const end = Date.now() + ms;
  let attempts = 0;
  let reason = "";
  const stop = new AbortController();
  const probe = async (url: string): Promise<boolean> => {
    while (!stop.signal.aborted && !settled()) {
      const left = end - Date.now();
      if (left <= 0) return false;
      attempts++;
      // a timer of our own: AbortSignal.timeout inside AbortSignal.any may be collected before it fires
      const attempt = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        attempt.abort();
      }, left);
      const unwatch = onAbort(stop.signal, () => attempt.abort());
      try {
        const response = await fetch(url, { signal: attempt.signal, redirect: "manual" });
        await response.body?.cancel();
        return true;
      } catch (error) {
        if (stop.signal.aborted) return true;
        if (!timedOut && !unreached(error)) return true;
        reason = timedOut
          ? `${url} accepts connections but sent no answer in ${ms / 1000} s`
          : innermost(error);
      } finally {
        clearTimeout(timer);
        unwatch();
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(0, end - Date.now()))));
    }
    return true;
  };
  const heard = await Promise.all(
    urls.map((url) =>
      probe(url).then((answered) => {
        if (answered) stop.abort();
        return answered;
      }),
    ),
  );
  return heard.some(Boolean) ? undefined : { reason, attempts };
}

/** The innermost cause's message (`connect ECONNREFUSED ...`), not the wrapper's ("fetch failed"). */
export function innermost(error: unknown): string {
  let inner = error;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  return inner instanceof Error ? inner.message : String(inner);
}
