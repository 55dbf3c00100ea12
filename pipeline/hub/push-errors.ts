// What can stop a push, said as advice. Every message ends on what a rerun does, because a rerun is
// the answer to most of them: files the hub already holds are compared, not sent again.
import { HubApiError } from "@huggingface/hub";
import { InterruptedError, UserError } from "../errors.js";
import { describeCause, hubDetail, isNetworkFailure } from "./errors.js";

const RERUN = "rerun the same command: files the hub already holds are not sent again";

/** The token is missing or cannot be what the hub expects; nothing was sent. */
export class PushTokenError extends UserError {}

/** The hub refused, could not be reached, or answered something unusable during a push. */
export class PushError extends UserError {}

export function explainPushError(
  error: unknown,
  what: string,
  context: { endpoint: string; tokenEnv: string; owner: string; signal?: AbortSignal | undefined },
): unknown {
  if (error instanceof UserError) return error;
  if (context.signal?.aborted) {
    return new InterruptedError(`the push stopped while ${what} (interrupted); ${RERUN}`);
  }
  if (error instanceof HubApiError) {
    const detail = hubDetail(error.message);
    if (error.statusCode === 401 || error.statusCode === 403) {
      return new PushError(
        `the hub refused ${what} (HTTP ${error.statusCode}${detail ? `: ${detail}` : ""}); set $${context.tokenEnv} ` +
          `to a token with write access to ${context.owner} (a fine-grained token needs write permission on that namespace)`,
      );
    }
    if (error.statusCode === 404) {
      return new PushError(
        `the hub found nothing for ${what} (HTTP 404${detail ? `: ${detail}` : ""}); check --repo OWNER/NAME and --revision`,
      );
    }
    return new PushError(
      `the hub answered HTTP ${error.statusCode} while ${what}${detail ? ` (${detail})` : ""}; ${RERUN}`,
    );
  }
  if (isNetworkFailure(error)) {
    return new PushError(
      `cannot reach the hub at ${context.endpoint} while ${what} (${describeCause(error)}); check the network, then ${RERUN}`,
      { cause: error },
    );
  }
  return error;
}
