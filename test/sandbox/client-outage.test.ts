// The /run_code client when every server fails after one answered: with `on_outage: wait` runs stop
// spending their retries and are answered once a server is back; with `stop` the run stops (exit 3).
// One that never answered stops the run after its probe, even if it accepts connections and hangs.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { HttpSandboxClient } from "../../pipeline/sandbox/client.js";
import { sandboxConfigSchema } from "../../pipeline/sandbox/config.js";
import { blackHole } from "../support/ports.js";

const SUCCESS = JSON.stringify({
  status: "Success",
  message: "",
  compile_result: null,
  run_result: { status: "Finished", return_code: 0, stdout: "1\n", stderr: "" },
});

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A /run_code server that answers 500 while `failing()` says so. */
async function start(failing: () => boolean): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests++;
      if (failing()) res.writeHead(500).end("restarting");
      else res.writeHead(200, { "content-type": "application/json" }).end(SUCCESS);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

const program = { code: "print(1)", language: "python" };
// outage_s shorter than any backoff: a run's second failure always comes after the outage began
const client = (url: string, on_outage: string) =>
  new HttpSandboxClient(sandboxConfigSchema.parse({ url, client_retries: 1, outage_s: 0.001, on_outage }));

describe("the sandbox client during an outage", () => {
  it("on_outage wait: every run is answered once the server is back, none fails", async () => {
    let down = false;
    let failures = 0;
    const s = await start(() => down && failures++ < 12);
    const c = client(s.url, "wait");
    expect((await c.run(program)).status).toBe("Success");
    down = true;
    const results = await Promise.all([c.run(program), c.run(program), c.run(program)]);
    await c.close();
    expect(results.map((r) => r.status)).toEqual(["Success", "Success", "Success"]);
    // more failures than the three runs' retries allowed
    expect(failures).toBeGreaterThan(6);
  });

  it("on_outage stop: the run stops with exit 3 naming the server; nothing more is sent", async () => {
    let down = false;
    const s = await start(() => down);
    const c = client(s.url, "stop");
    await c.run(program);
    down = true;
    const error = await c.run(program).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(3);
    expect((error as Error).message).toContain(`every sandbox server (${s.url}/run_code) has failed since`);
    expect((error as Error).message).toContain("sandbox.on_outage");
    const sent = s.requests();
    await expect(c.run(program)).rejects.toBe(error);
    expect(s.requests()).toBe(sent);
    await c.close();
  });
});

describe("the sandbox client at a server that never answered", () => {
  it("stops after its probe at a server that accepts connections and never answers, not after the run's budget", async () => {
    const hole = await blackHole();
    try {
      // the test's own limit is far below the budget of a run (compile + run timeouts + slack)
      const c = new HttpSandboxClient(
        sandboxConfigSchema.parse({ url: hole.url, probe_s: 0.5, run_timeout_s: 3600, client_slack_s: 3600 }),
      );
      const errors = await Promise.all(
        [c.run(program), c.run(program)].map((p) => p.catch((e: unknown) => e)),
      );
      await c.close();
      for (const error of errors) {
        expect(error).toBeInstanceOf(UserError);
        expect(error).toMatchObject({ exitCode: 3 });
        expect((error as Error).message).toContain(
          `no answer from the sandbox server at ${hole.url}/run_code`,
        );
        expect((error as Error).message).toContain("accepts connections but sent no answer");
      }
    } finally {
      await hole.close();
    }
  }, 120_000);

  it("waits for a busy server's first answer past probe_s: it answers HTTP, so it is alive", async () => {
    let runs = 0;
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.method !== "POST") return res.writeHead(405).end();
        runs++;
        setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(SUCCESS), 1500);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = new HttpSandboxClient(sandboxConfigSchema.parse({ url, probe_s: 0.2, client_retries: 0 }));
    expect((await c.run(program)).status).toBe("Success");
    await c.close();
    expect(runs).toBe(1);
  });
});
