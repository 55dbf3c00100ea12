// Identical requests in flight at once are sent once. Every caller waits for the same answer but
// may give up on its own (its record was interrupted): the request itself is only told to stop
// waiting when the last caller has gone, so one caller's abort never fails another's call.
import { onAbort } from "../abort.js";

interface Entry<T> {
  promise: Promise<T>;
  /** aborted when every caller has given up */
  controller: AbortController;
  callers: number;
}

export interface Joined<T> {
  value: T;
  /** false for the caller that started the request, true for those that joined it */
  shared: boolean;
}

export class InFlightRequests<T> {
  private readonly entries = new Map<string, Entry<T>>();

  /**
   * Waits for the request under `id`, starting it with `start` when none is in flight. `start`
   * gets a signal that fires only once no caller waits any more. A caller whose own signal fires
   * rejects at once with `aborted()`.
   */
  join(
    id: string,
    signal: AbortSignal | undefined,
    start: (signal: AbortSignal) => Promise<T>,
    aborted: () => Error,
  ): Promise<Joined<T>> {
    if (signal?.aborted) return Promise.reject(aborted());
    let entry = this.entries.get(id);
    const shared = entry !== undefined;
    if (!entry) {
      const controller = new AbortController();
      const created: Entry<T> = { promise: start(controller.signal), controller, callers: 0 };
      const forget = () => {
        if (this.entries.get(id) === created) this.entries.delete(id);
      };
      created.promise.then(forget, forget);
      this.entries.set(id, created);
      entry = created;
    }
    const joined = entry;
    joined.callers++;
    if (!signal) return joined.promise.then((value) => ({ value, shared }));
    return new Promise<Joined<T>>((resolve, reject) => {
      const stopWatching = onAbort(signal, () => {
        reject(aborted());
        joined.callers--;
        if (joined.callers === 0) {
          // Nobody waits: stop its waits, and let a later identical call start afresh.
          if (this.entries.get(id) === joined) this.entries.delete(id);
          joined.controller.abort();
        }
      });
      joined.promise.then(
        (value) => {
          stopWatching();
          resolve({ value, shared });
        },
        (error: unknown) => {
          stopWatching();
          reject(error);
        },
      );
    });
  }
}
