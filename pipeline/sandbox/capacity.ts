// How many programs a stage keeps in the sandbox at once when its config does not say:
// `sandbox.workers` where set; with `sandbox.url`, twice the workers the servers report on GET
// /v1/ping, so a run is waiting whenever a worker frees (docs/sandbox.md, Scaling out); else
// (embedded, or a server that does not say: SandboxFusion's) the cores of this machine.
import { urlList } from "../balance/config.js";
import { createHttpFetch } from "../http-fetch.js";
import type { Logger } from "../log.js";
import type { SandboxConfig } from "./config.js";

/** The response header of a server's GET /v1/ping that says how many runs it takes at once. */
export const WORKERS_HEADER = "x-sandbox-workers";

const PING_TIMEOUT_MS = 5000;

/** What one server said about its workers: a count, null when it answered without one (or without the path), or unreachable. */
export type ServerWorkers = { url: string; workers: number | null } | { url: string; unreachable: string };

/** sandbox config -> programs at once that its servers' workers give (twice their sum) */
const learned = new WeakMap<object, Promise<number | null>>();
const known = new WeakMap<object, number>();

/** Programs at once the servers of `config` gave (learnServerWorkers), or undefined: not asked, or they did not say. */
export function serverPrograms(config: object): number | undefined {
  return known.get(config);
}

/**
 * With `url` set and `workers` unset: asks the servers once (later calls wait for the same answer), so
 * that serverPrograms gives twice the sum of the reachable servers' workers. Says on `log` what it
 * found, and why it falls back to the cores (a server that does not say, or none reachable).
 */
export async function learnServerWorkers(config: SandboxConfig, log: Logger): Promise<void> {
  if (!config.url || config.workers !== undefined) return;
  let answer = learned.get(config);
  if (!answer) {
    answer = askServers(urlList(config.url)).then((servers) => gateFromServers(servers, log));
    learned.set(config, answer);
  }
  const programs = await answer;
  if (programs !== null) known.set(config, programs);
}

/** Programs at once from what the servers said, or null (fall back), with the line that says why. */
export function gateFromServers(servers: readonly ServerWorkers[], log: Logger): number | null {
  const fallback =
    "programs at once fall back to the stage's default (this machine's cores); set sandbox.workers to about twice the servers' workers";
  const reachable = servers.filter((s): s is { url: string; workers: number | null } => "workers" in s);
  for (const server of servers) {
    if ("unreachable" in server)
      log.warn(
        `sandbox: ${server.url} did not answer GET /v1/ping (${server.unreachable}); its workers are not counted`,
      );
  }
  if (reachable.length === 0) {
    log.warn(`sandbox: no server answered to say its workers: ${fallback}`);
    return null;
  }
  const silent = reachable.filter((s) => s.workers === null);
  if (silent.length > 0) {
    log.info(
      `sandbox: ${silent.map((s) => s.url).join(", ")} does not say how many workers it runs (not a \`pipeline sandbox serve\`?): ${fallback}`,
    );
    return null;
  }
  const workers = reachable.reduce((sum, s) => sum + (s.workers ?? 0), 0);
  log.info(
    `sandbox: the servers run ${workers} workers in all (${reachable.map((s) => `${s.url}: ${s.workers}`).join(", ")}): ${2 * workers} programs at once`,
  );
  return 2 * workers;
}

/** GET /v1/ping on each server (`http://host:port`, or its /run_code URL), at once. */
export async function askServers(urls: readonly string[]): Promise<ServerWorkers[]> {
  const http = createHttpFetch(Math.max(1, urls.length));
  try {
    return await Promise.all(
      urls.map(async (url): Promise<ServerWorkers> => {
        const shown = shownServer(url);
        try {
          const response = await http.fetch(`${serverBase(url)}/v1/ping`, {
            signal: AbortSignal.timeout(PING_TIMEOUT_MS),
          });
          await response.text();
          // any answer (a 404 from a server without the path too) is a server that does not say
          if (!response.ok) return { url: shown, workers: null };
          const said = Number(response.headers.get(WORKERS_HEADER));
          return { url: shown, workers: Number.isInteger(said) && said > 0 ? said : null };
        } catch (error) {
          return { url: shown, unreachable: (error as Error).message };
        }
      }),
    );
  } finally {
    http.close();
  }
}

/** A server's root URL from `sandbox.url`'s form of it (with or without /run_code). */
export function serverBase(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/run_code$/, "");
}

/** A server's URL without credentials or query, for log lines and usage. */
export function shownServer(url: string): string {
  const u = new URL(serverBase(url));
  return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
}
