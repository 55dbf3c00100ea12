// What can go wrong between us and the hub, each said as advice. All are UserErrors: the CLI prints
// the message and stops; rerunning continues from the bytes already on disk.
import { OperationalError, UserError } from "../errors.js";

/** 401/403: the dataset is gated or private, or the token is wrong. */
export class HubAccessError extends UserError {
  constructor(what: string, status: number, tokenEnv: string, hasToken: boolean, detail?: string) {
    const advice = hasToken
      ? `check that the token in $${tokenEnv} is valid and can read it (for a gated dataset, accept its terms on the dataset page first)`
      : `set $${tokenEnv} to an access token that can read it (for a gated dataset, accept its terms on the dataset page first)`;
    super(`the hub refused access to ${what} (HTTP ${status}${detail ? `: ${detail}` : ""}); ${advice}`);
  }
}

/** 404: the dataset, the revision or the file does not exist where the config says. */
export class HubNotFoundError extends UserError {
  constructor(what: string, advice: string, detail?: string, where = "the hub") {
    super(`${what} was not found on ${where}${detail ? ` (${detail})` : ""}; ${advice}`);
  }
}

/** No answer at all (DNS, refused connection, timeout) after every retry. */
export class HubUnreachableError extends OperationalError {
  /** what failed, without the advice (a caller whose setting names the endpoint gives its own) */
  readonly reason: string;
  constructor(endpoint: string, what: string, cause: unknown) {
    const reason = `cannot reach the hub at ${endpoint} while fetching ${what} (${describeCause(cause)})`;
    super(
      `${reason}; check the network, ` +
        "or set HF_ENDPOINT (or hub.endpoint) to a mirror you can reach, then rerun: finished files are kept " +
        "and a partial download continues where it stopped",
      { cause },
    );
    this.reason = reason;
  }
}

/** Any other hub answer we cannot use (5xx after retries, malformed responses). */
export class HubResponseError extends OperationalError {
  constructor(what: string, detail: string) {
    super(
      `the hub gave an unusable answer for ${what}: ${detail}; rerun later, or try a mirror via HF_ENDPOINT`,
    );
  }
}

/** A downloaded file whose size or hash differs from what the hub lists for it. */
export class FileIntegrityError extends UserError {
  constructor(file: string, detail: string) {
    super(
      `downloaded ${file} does not match the hub's listing (${detail}) even after fetching it again from ` +
        "scratch; the server or a proxy is altering it: try another HF_ENDPOINT, or report it to the mirror",
    );
  }
}

/** A request that got no usable answer: the connection failed, dropped or timed out. */
export function isNetworkFailure(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  return (
    (error instanceof TypeError &&
      /fetch failed|terminated|network|other side closed/i.test(error.message)) ||
    error.name === "AbortError" ||
    error.name === "TimeoutError" ||
    /no response within|socket hang up|ECONNRESET|ECONNREFUSED|EPIPE/i.test(error.message)
  );
}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const code = (inner as { code?: string } | undefined)?.code ?? (cause as { code?: string }).code;
    const innerMessage = inner instanceof Error ? inner.message : undefined;
    return [code, innerMessage ?? cause.message].filter(Boolean).join(": ");
  }
  return String(cause);
}

/** The hub's own words, without the request URL and id the library appends. */
export function hubDetail(message: string): string {
  return message
    .split(/\. URL: /)[0]!
    .split("\n")[0]!
    .slice(0, 300);
}
