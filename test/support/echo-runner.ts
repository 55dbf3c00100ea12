// A sandbox that runs nothing, for tests of what surrounds the runs (servers, replicas, counts): every
// program succeeds and prints its own code.
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/types.js";

/** The answer to `request`: success, its code as stdout, `executionTimeS` reported as the run's time. */
export function echoResponse(request: RunCodeRequest, executionTimeS = 0): RunCodeResponse {
  return {
    status: "Success",
    message: "",
    compile_result: null,
    run_result: {
      status: "Finished",
      execution_time: executionTimeS,
      return_code: 0,
      stdout: request.code,
      stderr: "",
    },
    files: {},
  };
}

/** Answers every program at once with `echoResponse`. */
export const echoRunner: CodeRunner = {
  run: async (request) => echoResponse(request),
  close: async () => {},
};
