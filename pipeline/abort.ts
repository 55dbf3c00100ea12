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
