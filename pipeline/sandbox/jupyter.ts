// SandboxFusion's POST /run_jupyter: Python cells run in turn in one IPython shell (jupyter-driver.py),
// which runs as a single python /run_code request, so a notebook gets exactly /run_code's isolation,
// limits, files and fetch_files, on whichever runner (embedded or remote) the server has.
import { readFileSync } from "node:fs";
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { SandboxProblem } from "./errors.js";
import { findLanguage } from "./languages.js";
import { parseBody } from "./request.js";
import type { CodeRunner, CommandRunResult, RunStatus } from "./types.js";

/** More cells than this are refused: each one's result line must fit the run's kept stdout. */
export const MAX_CELLS = 1000;
/** SandboxFusion's default for `total_timeout`, seconds. */
const TOTAL_TIMEOUT_S = 45;

export const runJupyterRequestSchema = z.looseObject({
  cells: z.array(z.string()),
  cell_timeout: z.number().nullish(),
  total_timeout: z.number().nullish(),
  memory_limit_MB: z.number().nullish(),
  kernel: z.literal("python3").nullish(),
  files: z.record(z.string(), z.string().nullable()).nullish(),
  fetch_files: z.array(z.string()).nullish(),
});

export type RunJupyterRequest = z.infer<typeof runJupyterRequestSchema>;

export interface CellRunResult {
  stdout: string;
  stderr: string;
  /** what the cell displayed, a last expression's value included: mime type -> content */
  display: Record<string, unknown>[];
  error: { ename: string; evalue: string; traceback: string[] }[];
  /** extra: some of its output was dropped to keep the answer within sandbox.max_output_bytes */
  truncated?: boolean;
}

export interface RunJupyterResponse {
  status: RunStatus;
  message: string;
  /** the run of the IPython shell itself (its stdout, our protocol, left out) */
  driver: CommandRunResult | null;
  cells: CellRunResult[];
  executor_pod_name?: string | null;
  problem?: SandboxProblem;
  files: Record<string, string>;
}

export function jupyterErrorResponse(message: string, problem?: SandboxProblem): RunJupyterResponse {
  return {
    status: "SandboxError",
    message,
    driver: null,
    cells: [],
    files: {},
    ...(problem ? { problem } : {}),
  };
}

export function parseRunJupyterRequest(value: unknown): RunJupyterRequest {
  return parseBody(runJupyterRequestSchema, value, "/run_jupyter", '{"cells": ["print(1)"]}');
}

let driver: string | undefined;

/** `maxOutputBytes`: the runner's sandbox.max_output_bytes, as the cells' results travel in the driver's stdout. */
export async function runJupyter(
  runner: CodeRunner,
  request: RunJupyterRequest,
  options: { signal?: AbortSignal; maxOutputBytes: number },
): Promise<RunJupyterResponse> {
  if (request.cells.length > MAX_CELLS) {
    return jupyterErrorResponse(
      `too many cells: ${request.cells.length}, over the ${MAX_CELLS} one /run_jupyter request may hold; split the notebook or join cells`,
      "request_too_large",
    );
  }
  // the driver is written where the python language puts its source, and deletes itself before the
  // first cell; a request file of that name is put back by the driver
  const source = findLanguage("python")!.sourceFile("");
  const files = { ...(request.files ?? {}) };
  let restore: Record<string, string> | null = null;
  for (const [path, content] of Object.entries(files)) {
    if (posix.normalize(path) === source && content !== null) {
      restore = { [source]: content };
      delete files[path];
    }
  }
  driver ??= readFileSync(fileURLToPath(new URL("./jupyter-driver.py", import.meta.url)), "utf8");
  const total =
    request.total_timeout != null && request.total_timeout > 0 ? request.total_timeout : TOTAL_TIMEOUT_S;
  const budget = options.maxOutputBytes - Math.min(4096, Math.floor(options.maxOutputBytes / 4));
  const response = await runner.run(
    {
      language: "python",
      code: driver,
      stdin: JSON.stringify({
        cells: request.cells,
        cell_timeout: request.cell_timeout ?? 0,
        budget,
        restore,
      }),
      run_timeout: total,
      ...(request.memory_limit_MB != null ? { memory_limit_MB: request.memory_limit_MB } : {}),
      files,
      ...(request.fetch_files ? { fetch_files: request.fetch_files } : {}),
    },
    options.signal ? { signal: options.signal } : {},
  );
  const run = response.run_result;
  if (response.status === "SandboxError" || run === null) {
    return {
      ...jupyterErrorResponse(response.message, response.problem),
      driver: run && { ...run, stdout: "" },
    };
  }
  const cells: CellRunResult[] = [];
  let spent = false;
  for (const line of (run.stdout ?? "").split("\n")) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // a cut last line (the run was killed), or bytes a cell wrote to the driver's own descriptor
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if ("missing" in value) {
      return jupyterErrorResponse(
        `/run_jupyter needs IPython inside the sandbox (${String((value as { detail?: unknown }).detail)}); install Debian package python3-ipython (scripts/install.sh does)`,
        "toolchain_missing",
      );
    }
    if ("budget_spent" in value) spent = true;
    else if ("display" in value) cells.push(value as CellRunResult);
  }
  const driverResult = { ...run, stdout: "" };
  const ran = `${cells.length} of ${request.cells.length} cells ran`;
  if (run.status === "TimeLimitExceeded") {
    return failed(`the notebook ran past total_timeout (${total} s); ${ran}`);
  }
  if (run.return_code !== 0) {
    return failed(`the kernel died (${response.message || `exit code ${run.return_code}`}); ${ran}`);
  }
  return {
    status: "Success",
    message: spent
      ? `${ran}; the rest did not run, as their results would not fit in sandbox.max_output_bytes`
      : "",
    driver: driverResult,
    cells,
    files: response.files,
  };

  function failed(message: string): RunJupyterResponse {
    return { status: "Failed", message, driver: driverResult, cells, files: response.files };
  }
}
