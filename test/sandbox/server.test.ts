// The /run_code server speaks SandboxFusion's protocol to a plain HTTP client, pushes back with 503
// when its queue is full, and our client retries what a busy replica answers.
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import {
  createCodeRunner,
  EmbeddedSandbox,
  HttpSandboxClient,
  type RunCodeResponse,
  SandboxRemoteError,
} from "../../pipeline/sandbox/index.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import { probeIsolationMode, testConfig } from "./helpers.js";

const mode = await probeIsolationMode();

async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; json: RunCodeResponse & { detail?: string } }> {
  const response = await fetch(`${url}/run_code`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as RunCodeResponse & { detail?: string } };
}

describe.skipIf(mode === null)("POST /run_code", () => {
  let sandbox: EmbeddedSandbox;
  let server: SandboxServer;

  beforeAll(async () => {
    sandbox = new EmbeddedSandbox(testConfig());
    server = await startSandboxServer({ runner: sandbox, port: 0, maxBodyBytes: 64 * 1024 });
  });
  afterAll(async () => {
    await server.close();
    await sandbox.close();
  });

  it("answers a SandboxFusion request with SandboxFusion's response shape", async () => {
    const { status, json } = await post(server.url, {
      code: "print(input())",
      language: "python",
      compile_timeout: 10,
      run_timeout: 10,
      memory_limit_MB: -1,
      stdin: "hi",
      files: {},
      fetch_files: [],
      some_future_field: true,
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      status: "Success",
      message: "",
      compile_result: null,
      run_result: { status: "Finished", return_code: 0, stdout: "hi\n", stderr: "" },
      files: {},
    });
    expect(typeof json.run_result?.execution_time).toBe("number");
  });

  it("answers 422 for a body that is not a request", async () => {
    expect((await post(server.url, "{not json")).status).toBe(422);
    const missing = await post(server.url, { language: "python" });
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toContain("code");
  });

  it("answers 413 with a SandboxError for an oversized body", async () => {
    const { status, json } = await post(server.url, { code: "x".repeat(100 * 1024), language: "python" });
    expect(status).toBe(413);
    expect(json.status).toBe("SandboxError");
  });

  it("answers an unknown language with a SandboxError", async () => {
    const { status, json } = await post(server.url, { code: "", language: "brainfuck" });
    expect(status).toBe(200);
    expect(json.status).toBe("SandboxError");
  });

  it("serves /v1/ping and /languages", async () => {
    expect(await (await fetch(`${server.url}/v1/ping`)).text()).toBe("pong");
    const languages = (await (await fetch(`${server.url}/languages`)).json()) as { id: string }[];
    expect(languages.map((l) => l.id)).toContain("python");
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
  });

  it("is reached through createCodeRunner when sandbox.url is set", async () => {
    const runner = createCodeRunner(testConfig({ url: server.url }));
    expect(runner).toBeInstanceOf(HttpSandboxClient);
    const response = await runner.run({ language: "bash", code: "echo $((6*7))" });
    await runner.close();
    expect(response.run_result?.stdout).toBe("42\n");
  });
});

describe.skipIf(mode === null)("backpressure", () => {
  it("answers 503 with Retry-After when every worker is busy and the queue is full", async () => {
    const sandbox = new EmbeddedSandbox(testConfig({ workers: 1, queue: 0 }));
    const server = await startSandboxServer({ runner: sandbox, port: 0, maxBodyBytes: 64 * 1024 });
    try {
      // long enough that the second request surely arrives while it runs, however slow the machine
      const slow = post(server.url, { code: "import time\ntime.sleep(5)", language: "python" });
      // the first request must hold the only worker before the second arrives
      while (sandbox.stats().busy === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const refused = await fetch(`${server.url}/run_code`, {
        method: "POST",
        body: JSON.stringify({ code: "print(1)", language: "python" }),
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(((await refused.json()) as RunCodeResponse).message).toContain("busy");
      // our client waits and retries until the worker is free
      const client = new HttpSandboxClient(testConfig({ url: server.url, client_retries: 10 }));
      const retried = await client.run({ code: "print(2)", language: "python" });
      await client.close();
      expect(retried.run_result?.stdout).toBe("2\n");
      expect((await slow).json.status).toBe("Success");
    } finally {
      await server.close();
      await sandbox.close();
    }
  });
});

describe("HTTP client", () => {
  let flaky: Server;
  let url: string;
  let calls = 0;

  beforeAll(async () => {
    // fails twice, then answers like SandboxFusion (which may leave out our extras)
    flaky = createServer((req, res) => {
      calls++;
      req.resume();
      if (req.url === "/bad/run_code") {
        res.writeHead(200, { "content-type": "application/json" }).end('{"hello": 1}');
      } else if (req.url === "/refuse/run_code") {
        res.writeHead(422, { "content-type": "application/json" }).end('{"detail": "bad language"}');
      } else if (calls <= 2) {
        res.writeHead(502).end("bad gateway");
      } else {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            status: "Success",
            message: "",
            compile_result: null,
            run_result: {
              status: "Finished",
              execution_time: 0.01,
              return_code: 0,
              stdout: "ok\n",
              stderr: "",
            },
            executor_pod_name: null,
          }),
        );
      }
    });
    await new Promise<void>((resolve) => flaky.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
  });
  afterAll(() => flaky.close());

  it("retries 5xx answers and fills in what SandboxFusion leaves out", async () => {
    const client = new HttpSandboxClient(testConfig({ url, client_retries: 3 }));
    const response = await client.run({ code: "print('ok')", language: "python" });
    await client.close();
    expect(calls).toBe(3);
    expect(response.status).toBe("Success");
    expect(response.files).toEqual({});
  });

  it("turns a refused request into a SandboxError response", async () => {
    const client = new HttpSandboxClient(testConfig({ url: `${url}/refuse` }));
    const response = await client.run({ code: "", language: "cobol" });
    await client.close();
    expect(response.status).toBe("SandboxError");
    expect(response.message).toContain("bad language");
  });

  it("rejects an answer that is not a SandboxFusion response", async () => {
    const client = new HttpSandboxClient(testConfig({ url: `${url}/bad` }));
    await expect(client.run({ code: "", language: "python" })).rejects.toBeInstanceOf(SandboxRemoteError);
    await client.close();
  });

  it("gives up on a server that never answered with advice, after its probe", async () => {
    const client = new HttpSandboxClient(
      testConfig({ url: "http://127.0.0.1:9", client_retries: 1, probe_s: 0.2 }),
    );
    const error = await client.run({ code: "", language: "python" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(3);
    expect((error as Error).message).toContain(
      "no answer from the sandbox server at http://127.0.0.1:9/run_code",
    );
    expect((error as Error).message).toContain("Check sandbox.url");
    await client.close();
  });
});

describe.skipIf(mode === null)("server limits", () => {
  it("cuts a client that never finishes its request, but never a long run", async () => {
    const sandbox = new EmbeddedSandbox(testConfig({ workers: 1 }));
    const server = await startSandboxServer({
      runner: sandbox,
      port: 0,
      maxBodyBytes: 64 * 1024,
      requestTimeoutMs: 400,
    });
    try {
      const { port } = new URL(server.url);
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write(
        "POST /run_code HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
      );
      const closed = await new Promise<string>((resolve) => {
        let answer = "";
        socket.on("data", (chunk) => {
          answer += chunk;
        });
        socket.on("close", () => resolve(answer));
      });
      expect(closed).toMatch(/^HTTP\/1.1 408|^$/);
      // a run far longer than the request timeout still gets its answer
      const { status, json } = await post(server.url, {
        code: "import time\ntime.sleep(1.5)\nprint('done')",
        language: "python",
      });
      expect(status).toBe(200);
      expect(json.run_result?.stdout).toBe("done\n");
    } finally {
      await server.close();
      await sandbox.close();
    }
  });

  it("answers 503 once the request bodies it holds reach max_pending_bytes", async () => {
    const sandbox = new EmbeddedSandbox(testConfig({ workers: 1 }));
    const server = await startSandboxServer({
      runner: sandbox,
      port: 0,
      maxBodyBytes: 64 * 1024,
      maxPendingBytes: 80 * 1024,
    });
    try {
      const padding = `# ${"x".repeat(50 * 1024)}\n`;
      const held = post(server.url, { code: `${padding}import time\ntime.sleep(5)`, language: "python" });
      while (sandbox.stats().busy === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const refused = await post(server.url, { code: `${padding}print(1)`, language: "python" });
      expect(refused.status).toBe(503);
      expect(refused.json.message).toContain("Retry later");
      expect((await held).json.status).toBe("Success");
      // the bytes are given back when a request ends
      const after = await post(server.url, { code: `${padding}print(1)`, language: "python" });
      expect(after.json.status).toBe("Success");
    } finally {
      await server.close();
      await sandbox.close();
    }
  });
});
