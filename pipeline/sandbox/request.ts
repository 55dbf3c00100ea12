// Validation of incoming /run_code requests and the SandboxFusion status rules: a run is `Success`
// when every step it took finished with exit code 0, `Failed` when a step failed or ran out of time,
// and `SandboxError` when the sandbox itself could not run it (unknown language, missing toolchain,
// oversized request, no isolation, internal failure).
import { z } from "zod";
import { type SandboxProblem, SandboxRequestError } from "./errors.js";
import type { CommandRunResult, RunCodeRequest, RunCodeResponse, RunStatus } from "./types.js";

/** Unknown keys are ignored, as SandboxFusion does, so newer clients keep working. */
export const runCodeRequestSchema = z.looseObject({
  code: z.string(),
  language: z.string().min(1),
  compile_timeout: z.number().nullish(),
  run_timeout: z.number().nullish(),
  memory_limit_MB: z.number().nullish(),
  stdin: z.string().nullish(),
  files: z.record(z.string(), z.string().nullable()).nullish(),
  fetch_files: z.array(z.string()).nullish(),
});

/** `value` as `schema` says, or a SandboxRequestError naming the bad fields and the least a request holds. */
export function parseBody<T extends z.ZodType>(
  schema: T,
  value: unknown,
  endpoint: string,
  least: string,
): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues
    .map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`)
    .join("; ");
  throw new SandboxRequestError(
    "invalid_request",
    `invalid ${endpoint} request (${fields}); send JSON with at least ${least}`,
  );
}

/** Parses a request from an untyped source (HTTP body, CLI), with an error that names the bad fields. */
export function parseRunCodeRequest(value: unknown): RunCodeRequest {
  const { compile_timeout, run_timeout, memory_limit_MB, stdin, files, fetch_files, ...rest } = parseBody(
    runCodeRequestSchema,
    value,
    "/run_code",
    '{"code": "...", "language": "python"}',
  );
  const request: RunCodeRequest = { ...rest };
  if (compile_timeout != null) request.compile_timeout = compile_timeout;
  if (run_timeout != null) request.run_timeout = run_timeout;
  if (memory_limit_MB != null) request.memory_limit_MB = memory_limit_MB;
  if (stdin != null) request.stdin = stdin;
  if (files != null) request.files = files;
  if (fetch_files != null) request.fetch_files = fetch_files;
  return request;
}

/** Bytes the request carries (code, stdin, decoded files), checked against `max_request_bytes`. */
export function requestBytes(request: RunCodeRequest): number {
  let bytes = Buffer.byteLength(request.code) + Buffer.byteLength(request.stdin ?? "");
  for (const [path, content] of Object.entries(request.files ?? {})) {
    bytes += Buffer.byteLength(path) + Math.ceil(((content ?? "").length * 3) / 4);
  }
  return bytes;
}

function stepSucceeded(result: CommandRunResult | null): boolean {
  return result === null || (result.status === "Finished" && result.return_code === 0);
}

export function runStatus(compile: CommandRunResult | null, run: CommandRunResult | null): RunStatus {
  if (compile === null && run === null) return "SandboxError";
  if (compile?.status === "Error" || run?.status === "Error") return "SandboxError";
  return stepSucceeded(compile) && run !== null && stepSucceeded(run) ? "Success" : "Failed";
}

export function sandboxErrorResponse(message: string, problem?: SandboxProblem): RunCodeResponse {
  const response: RunCodeResponse = {
    status: "SandboxError",
    message,
    compile_result: null,
    run_result: null,
    files: {},
  };
  if (problem) response.problem = problem;
  return response;
}
