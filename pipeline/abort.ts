// Hundreds of calls wait on one stage's signal at once (LLM requests, endpoint leases, sandbox
// back-offs): one listener per signal, fanned out here, instead of one each, which Node warns about
// (MaxListenersExceededWarning) and whose removal is linear in their number.
const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `callback` once when `signal` aborts; the returned function stops watching. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = watchers.get(signal);
  if (!callbacks) {
    const created = new Set<() => void>();
    signal.addEventListener(
      "abort",
      () => {
        watchers.delete(signal);
        for (const call of [...created]) call();
        created.clear();
      },
      { once: true },
    );
    watchers.set(signal, created);
    callbacks = created;
  }
  const registered = callbacks;
  registered.add(callback);
  return () => registered.delete(callback);
}

/**
 * Resolves after `ms`, or rejects as soon as `signal` aborts (at once if it has), with `reason()`: by
 * default the signal's own reason. Watches the signal through `onAbort`, so the many back-offs of an
 * outage add no listener each.
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  reason: () => unknown = () => signal?.reason,
): Promise<void> {
  if (!signal) return new Promise((resolve) => setTimeout(resolve, ms));
  if (signal.aborted) return Promise.reject(reason());
  return new Promise((resolve, reject) => {
    const stopWatching = onAbort(signal, () => {
      clearTimeout(timer);
      reject(reason());
    });
    const timer = setTimeout(() => {
      stopWatching();
      resolve();
    }, ms);
  });
}
