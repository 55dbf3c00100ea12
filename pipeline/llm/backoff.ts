// How long to wait before the next attempt: what the server asked for (Retry-After), otherwise
// exponential backoff with jitter so that many requests failing together do not retry together.

/** Milliseconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date); undefined if absent. */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - Date.now());
}

/** A server may ask for a long pause; we honour it, within reason (this long at most). */
export const MAX_SERVER_WAIT_MS = 10 * 60_000;

export function backoffMs(
  attempt: number,
  options: { baseMs: number; maxMs: number; retryAfterMs?: number | undefined },
  random: () => number = Math.random,
): number {
  if (options.retryAfterMs !== undefined) {
    // A little jitter on top, so the requests that waited together do not all come back at once.
    return Math.min(MAX_SERVER_WAIT_MS, options.retryAfterMs) + random() * Math.min(1000, options.baseMs);
  }
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt - 1));
  return ceiling / 2 + random() * (ceiling / 2);
}
