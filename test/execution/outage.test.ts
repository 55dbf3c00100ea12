// pipeline/execution's outage policy, the one way every stage reaches the sandbox: a sandbox that
// fails is asked again and then named an outage (SandboxOutageError), a sandbox that says it has no
// toolchain for the language gives a `language-unavailable` result at once (told by its typed
// `problem`, over the wire too, never by the wording of its message), and the leetcode judge and the
// CommonOJ runner take the same policy.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommonOJ } from "../../pipeline/eval/common-oj.js";
import {
  callUnderPolicy,
  executeBlock,
  SandboxOutageError,
  type SandboxSettings,
} from "../../pipeline/execution/index.js";
import { HttpSandboxClient } from "../../pipeline/sandbox/client.js";
import { sandboxConfigSchema } from "../../pipeline/sandbox/config.js";
import { EmbeddedSandbox, SandboxRequestError } from "../../pipeline/sandbox/index.js";
import { sandboxErrorResponse } from "../../pipeline/sandbox/request.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import type { CodeRunner, RunCodeRequest, RunCodeResponse } from "../../pipeline/sandbox/types.js";
import { SolutionJudge } from "../../stages/leetcode/judge.js";
import { parseTests } from "../../stages/leetcode/taco.js";
import { testConfig } from "../sandbox/helpers.js";
import { tempDir } from "../support/temp-dir.js";

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());

const FAST: SandboxSettings = { run_timeout_s: 5, compile_timeout_s: 30, sandbox_attempts: 3, backoff_ms: 1 };

/** The real sandbox behind the first `failures` requests answering as a crashed worker would. */
function failing(failures: number, answer: RunCodeResponse = sandboxErrorResponse("worker lost")) {
  const sent: RunCodeRequest[] = [];
  const runner: CodeRunner = {
    run: (request, options) => {
      sent.push(request);
      return sent.length <= failures ? Promise.resolve(answer) : sandbox.run(request, options);
    },
    close: async () => {},
  };
  return { runner, sent };
}

describe("executeBlock", () => {
  it("asks a failing sandbox again and returns the run it finally gives", async () => {
    const { runner, sent } = failing(2);
    const result = await executeBlock(runner, "print(6 * 7)", "python", FAST);
    expect(result.status).toBe("success");
    expect(result.stdout).toBe("42\n");
    expect(sent).toHaveLength(3);
  });

  it("names an outage after the last try, with the sandbox's last message and advice", async () => {
    const { runner, sent } = failing(10);
    const error = await executeBlock(runner, "print(1)", "python", FAST).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxOutageError);
    expect((error as Error).message).toMatch(/after 3 tries: worker lost\. Check the sandbox/);
    expect(sent).toHaveLength(3);
  });

  it("a runner that throws is an outage too", async () => {
    const down: CodeRunner = {
      run: () => Promise.reject(new Error("connect ECONNREFUSED")),
      close: async () => {},
    };
    const settings = { ...FAST, sandbox_attempts: 2 };
    await expect(executeBlock(down, "print(1)", "python", settings)).rejects.toThrow(
      /after 2 tries: connect ECONNREFUSED/,
    );
  });

  it("a missing toolchain is a language-unavailable result at the first try, by its type", async () => {
    const { runner, sent } = failing(10, sandboxErrorResponse("no compiler here", "toolchain_missing"));
    const result = await executeBlock(runner, "fn main() {}", "rust", FAST);
    expect(result.status).toBe("language-unavailable");
    expect(result.message).toBe("no compiler here");
    expect(sent).toHaveLength(1);
  });

  it("a message that only reads like a missing language is an outage, not a status", async () => {
    const { runner } = failing(10, sandboxErrorResponse("go is not available here: go not found"));
    await expect(executeBlock(runner, "package main", "go", FAST)).rejects.toBeInstanceOf(SandboxOutageError);
  });
});

describe("a refusal over the wire", () => {
  let server: SandboxServer;
  beforeAll(async () => {
    const refusing: CodeRunner = {
      run: async (request) => {
        throw new SandboxRequestError("toolchain_missing", `${request.language} is missing on this server`);
      },
      close: async () => {},
    };
    server = await startSandboxServer({ runner: refusing, port: 0, maxBodyBytes: 1 << 20 });
  });
  afterAll(() => server.close());

  it("keeps its type from our server through the HTTP client", async () => {
    const client = new HttpSandboxClient(sandboxConfigSchema.parse({ url: server.url }));
    try {
      const result = await executeBlock(client, "print(1)", "python", FAST);
      expect(result.status).toBe("language-unavailable");
      expect(result.message).toContain("python is missing on this server");
    } finally {
      await client.close();
    }
  });
});

describe("callUnderPolicy and the judges built on it", () => {
  it("returns the sandbox's answer once it runs the request", async () => {
    const { runner, sent } = failing(1);
    const call = await callUnderPolicy(runner, { code: "print(2)", language: "python" }, {}, FAST);
    expect(call.response.status).toBe("Success");
    expect(sent).toHaveLength(2);
  });

  it("CommonOJ with a stage's policy retries each case; without one it records the error as SandboxFusion does", async () => {
    const problem = { id: "p", content: "", cases: [{ stdin: "3\n", stdout: "6\n" }] };
    const answer = { qid: "p", id: "0", code: "print(int(input()) * 2)", language: "python" as const };
    const retried = failing(2);
    const passed = await runCommonOJ(retried.runner, problem, answer, { outage: FAST });
    expect(passed.outcome).toBe("Passed");
    expect(retried.sent).toHaveLength(3);
    const once = failing(2);
    const recorded = await runCommonOJ(once.runner, problem, answer);
    expect(recorded.sandbox_status).toBe("SandboxError");
    expect(once.sent).toHaveLength(1);
    const gone = failing(10);
    await expect(runCommonOJ(gone.runner, problem, answer, { outage: FAST })).rejects.toBeInstanceOf(
      SandboxOutageError,
    );
  });

  it("the leetcode judge gets a verdict through a sandbox that failed once, and an outage after its tries", async () => {
    const dir = tempDir("judge-outage-");
    const tests = parseTests(JSON.stringify({ fn_name: "double", inputs: [[2]], outputs: [4] }));
    if ("error" in tests) throw new Error(tests.error);
    const task = { problemId: "p1", tests, starterCode: "" };
    const limits = { runTimeoutS: 5, compileTimeoutS: 30 };
    const signal = new AbortController().signal;
    const code = "def double(x):\n    return 2 * x\n";
    const flaky = failing(1);
    const judge = new SolutionJudge(flaky.runner, path.join(dir, "a"), limits, signal, FAST);
    expect((await judge.judge(task, code, "python")).verdict).toBe("passed");
    const down = failing(10);
    const stuck = new SolutionJudge(down.runner, path.join(dir, "b"), limits, signal, FAST);
    await expect(stuck.judge(task, code, "python")).rejects.toBeInstanceOf(SandboxOutageError);
    expect(down.sent).toHaveLength(3);
  });
});
