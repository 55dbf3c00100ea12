// POST /run_jupyter speaks SandboxFusion's notebook protocol over HTTP: cells share one IPython shell,
// each answers with its stdout, stderr, displayed values (text/plain as a Jupyter kernel formats them)
// and errors; timeouts, files and fetch_files behave as upstream's, in /run_code's isolation, and
// oversized or malformed requests get SandboxFusion's error shape while the server keeps serving.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedSandbox, sandboxConfigSchema } from "../../pipeline/sandbox/index.js";
import { MAX_CELLS, type RunJupyterResponse } from "../../pipeline/sandbox/jupyter.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import { present } from "../support/required.js";
import { tempDir } from "../support/temp-dir.js";
import { probeIsolationMode, testConfig } from "./helpers.js";

const mode = await probeIsolationMode();
const ipython = (() => {
  try {
    execFileSync("/usr/bin/python3", ["-c", "import IPython"], { stdio: "pipe" });
    return true;
  } catch {
    return present("SANDBOX", "/run_jupyter needs python3-ipython (scripts/install.sh installs it)");
  }
})();

const OUTPUT_BYTES = 64 * 1024;
// as `pipeline sandbox serve` sizes it from the default sandbox.max_request_bytes
const MAX_BODY_BYTES = Math.ceil(sandboxConfigSchema.parse({}).max_request_bytes * 1.4) + 65536;

async function post(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: RunJupyterResponse }> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as RunJupyterResponse };
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe.skipIf(mode === null || !ipython)("POST /run_jupyter", () => {
  let sandbox: EmbeddedSandbox;
  let server: SandboxServer;
  const jupyter = (body: unknown) => post(server.url, "/run_jupyter", body);

  beforeAll(async () => {
    sandbox = new EmbeddedSandbox(testConfig({ max_output_bytes: OUTPUT_BYTES }));
    server = await startSandboxServer({
      runner: sandbox,
      port: 0,
      maxBodyBytes: MAX_BODY_BYTES,
      maxOutputBytes: OUTPUT_BYTES,
    });
  });
  afterAll(async () => {
    await server.close();
    await sandbox.close();
  });

  it("runs cells in one shell and answers each with stdout, stderr, display and error", async () => {
    const { status, json } = await jupyter({
      cells: [
        "a = 123",
        "a",
        "print(a)",
        "import sys; sys.stderr.write('stderr message')",
        "raise RuntimeError('error message')",
        "a + 1",
      ],
    });
    expect(status).toBe(200);
    expect(json.status).toBe("Success");
    expect(json.message).toBe("");
    expect(json.driver).toMatchObject({ status: "Finished", return_code: 0 });
    expect(json.files).toEqual({});
    expect(json.cells).toHaveLength(6);
    expect(json.cells[0]).toEqual({ stdout: "", stderr: "", display: [], error: [] });
    expect(json.cells[1]!.display).toEqual([{ "text/plain": "123" }]);
    expect(json.cells[2]).toMatchObject({ stdout: "123\n", stderr: "", display: [] });
    // write() returns the count, which a kernel displays too
    expect(json.cells[3]).toMatchObject({
      stdout: "",
      stderr: "stderr message",
      display: [{ "text/plain": "14" }],
    });
    const [error] = json.cells[4]!.error;
    expect(error).toMatchObject({ ename: "RuntimeError", evalue: "error message" });
    expect(error!.traceback.at(-1)).toContain("error message");
    // an error in one cell does not stop the notebook
    expect(json.cells[5]!.display).toEqual([{ "text/plain": "124" }]);
  });

  it("displays values as a Jupyter kernel formats them", async () => {
    const { json } = await jupyter({
      cells: [
        "list(range(30))",
        "x = 5;",
        "x;",
        "from IPython.display import display\ndisplay({'b': 2, 'a': 1})\n'last'",
        "print('out', flush=True)\nimport os\nos.system('echo from a subprocess')\nNone",
        "def broken(:",
        "exit()",
        "print('after exit')",
      ],
    });
    expect(json.status).toBe("Success");
    // IPython's pretty printer, not repr(): a list past 79 columns goes one item a line
    expect(json.cells[0]!.display).toEqual([
      { "text/plain": `[${Array.from({ length: 30 }, (_, i) => i).join(",\n ")}]` },
    ]);
    expect(json.cells[1]!.display).toEqual([]);
    expect(json.cells[2]!.display).toEqual([]);
    expect(json.cells[3]!.display).toEqual([
      { "text/plain": "{'b': 2, 'a': 1}" },
      { "text/plain": "'last'" },
    ]);
    // output at the descriptor level (a subprocess) belongs to its cell, as in ipykernel
    expect(json.cells[4]!.stdout).toBe("out\nfrom a subprocess\n");
    expect(json.cells[5]!.error[0]).toMatchObject({ ename: "SyntaxError" });
    // exit() ends the kernel: the cells after it do not run
    expect(json.cells).toHaveLength(7);
  });

  it("interrupts a cell past cell_timeout as Jupyter does and goes on with the next", async () => {
    const { json } = await jupyter({
      cells: ["n = 7", "while True: pass", "import time; time.sleep(60)", "n * 6"],
      cell_timeout: 1,
      total_timeout: 30,
    });
    expect(json.status).toBe("Success");
    expect(json.cells[1]!.error[0]).toMatchObject({ ename: "KeyboardInterrupt" });
    expect(json.cells[2]!.error[0]).toMatchObject({ ename: "KeyboardInterrupt" });
    expect(json.cells[3]!.display).toEqual([{ "text/plain": "42" }]);
  });

  it("fails a notebook past total_timeout, with the cells that finished", async () => {
    const { status, json } = await jupyter({
      // room for python and IPython to start on a slow machine: the limit counts them too
      cells: ["print('first')", "import time; time.sleep(600)", "print('never')"],
      total_timeout: 20,
    });
    expect(status).toBe(200);
    expect(json.status).toBe("Failed");
    expect(json.message).toContain("total_timeout (20 s)");
    expect(json.driver?.status).toBe("TimeLimitExceeded");
    expect(json.cells.map((cell) => cell.stdout)).toEqual(["first\n"]);
  });

  it("gives the cells the request's files, and only those, and fetches what they write", async () => {
    const { json } = await jupyter({
      cells: [
        "import os; sorted(os.listdir())",
        "open('data.txt').read()",
        "open('main.py').read()",
        "with open('out.txt', 'w') as f: f.write('written by a cell')",
      ],
      files: { "data.txt": b64("hello"), "main.py": b64("a file named like the driver") },
      fetch_files: ["out.txt"],
    });
    expect(json.status).toBe("Success");
    expect(json.cells[0]!.display).toEqual([{ "text/plain": "['data.txt', 'main.py']" }]);
    expect(json.cells[1]!.display).toEqual([{ "text/plain": "'hello'" }]);
    expect(json.cells[2]!.display).toEqual([{ "text/plain": "'a file named like the driver'" }]);
    expect(Buffer.from(json.files["out.txt"]!, "base64").toString()).toBe("written by a cell");
  });

  it("runs the cells in /run_code's isolation: no host files, no network", async () => {
    const secret = join(tempDir("jupyter-host-"), "secret.txt");
    writeFileSync(secret, "host secret");
    const port = new URL(server.url).port;
    const { json } = await jupyter({
      cells: [
        `open(${JSON.stringify(secret)}).read()`,
        `import socket; socket.create_connection(("127.0.0.1", ${port}), timeout=2)`,
        "open('/usr/lib/planted', 'w')",
      ],
    });
    expect(json.status).toBe("Success");
    expect(json.cells[0]!.error[0]).toMatchObject({ ename: "FileNotFoundError" });
    expect(json.cells[1]!.error[0]?.ename).toMatch(/ConnectionRefusedError|OSError|TimeoutError/);
    expect(json.cells[2]!.error[0]?.ename).toMatch(/OSError|PermissionError/);
    expect(JSON.stringify(json.cells)).not.toContain("host secret");
  });

  it("keeps the answer within max_output_bytes, marking the cells it cut", async () => {
    const { json } = await jupyter({
      cells: ["print('x' * 200_000)", "print('still here')"],
    });
    expect(json.status).toBe("Success");
    expect(json.cells[0]!.truncated).toBe(true);
    expect(json.cells[0]!.stdout.length).toBeLessThan(OUTPUT_BYTES);
    expect(json.cells[0]!.stdout).toMatch(/^x+$/);
    expect(json.cells[1]!.stdout).toBe("still here\n");
  });

  it("drops a displayed value that no longer fits, and says so, while later cells still answer", async () => {
    const { json } = await jupyter({ cells: ["'x' * 40_000", "'y' * 40_000", "6 * 7"] });
    expect(json.status).toBe("Success");
    expect(json.cells[0]!.display).toEqual([{ "text/plain": `'${"x".repeat(40_000)}'` }]);
    expect(json.cells[1]).toMatchObject({ display: [], truncated: true });
    expect(json.cells[2]!.display).toEqual([{ "text/plain": "42" }]);
  });

  describe("bad input", () => {
    const stillServing = async () => {
      const { json } = await jupyter({ cells: ["1 + 1"] });
      expect(json.cells[0]!.display).toEqual([{ "text/plain": "2" }]);
    };

    it(`refuses more than ${MAX_CELLS} cells with a SandboxError, and keeps serving`, async () => {
      const { status, json } = await jupyter({ cells: Array.from({ length: 10_000 }, () => "pass") });
      expect(status).toBe(200);
      expect(json).toMatchObject({ status: "SandboxError", driver: null, cells: [], files: {} });
      expect(json.message).toContain(`10000, over the ${MAX_CELLS}`);
      await stillServing();
    });

    it("refuses a 50 MB files entry on both run endpoints, and keeps serving", async () => {
      const files = { "big.bin": Buffer.alloc(50 << 20, 7).toString("base64") };
      for (const [path, body] of [
        ["/run_jupyter", { cells: ["1"], files }],
        ["/run_code", { code: "print(1)", language: "python", files }],
      ] as const) {
        const { status, json } = await post(server.url, path, body);
        expect(status).toBe(413);
        expect(json.status).toBe("SandboxError");
        expect(json.message).toContain("request body over");
      }
      await stillServing();
    });

    it("answers 422 with the SandboxError shape for a malformed request", async () => {
      for (const body of ["{not json", { cells: "print(1)" }, { cells: ["1"], kernel: "julia" }]) {
        const { status, json } = await jupyter(body);
        expect(status).toBe(422);
        expect(json).toMatchObject({ status: "SandboxError", cells: [], driver: null });
      }
      await stillServing();
    });
  });
});
