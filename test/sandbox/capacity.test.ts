// How many programs a stage keeps in the sandbox when `sandbox.url` is set and `sandbox.workers` is
// not: twice the workers our servers report on their health path; a server that does not say, or
// none answering, leaves the default with a line that says why. Real servers on loopback: ours over
// the embedded sandbox, ours over a runner that does not know, one with no health path, a dead port.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import {
  askServers,
  gateFromServers,
  learnServerWorkers,
  serverPrograms,
  WORKERS_HEADER,
} from "../../pipeline/sandbox/capacity.js";
import { sandboxConfigSchema } from "../../pipeline/sandbox/config.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import { recordingLogger } from "../llm/helpers.js";
import { echoRunner } from "../support/echo-runner.js";
import { freePort } from "../support/ports.js";
import { testConfig } from "./helpers.js";

const sandboxes = [
  new EmbeddedSandbox(testConfig({ workers: 3 })),
  new EmbeddedSandbox(testConfig({ workers: 5 })),
];
const servers: SandboxServer[] = await Promise.all([
  ...sandboxes.map((runner) => startSandboxServer({ runner, port: 0, maxBodyBytes: 1 << 20 })),
  // answers /run_code and /v1/ping like SandboxFusion, without a word about its workers
  startSandboxServer({ runner: echoRunner, port: 0, maxBodyBytes: 1 << 20 }),
]);
const [three, five, silent] = servers.map((server) => server.url) as [string, string, string];
const dead = `http://127.0.0.1:${await freePort()}`;
// a /run_code server without GET /v1/ping: every other path is a 404
const bare = createServer((_req, res) => res.writeHead(404).end("not found"));
await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
const noPing = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
afterAll(async () => {
  bare.close();
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
});

describe("a sandbox server's workers", () => {
  it("are said on GET /v1/ping by a server in front of the embedded sandbox, and only there", async () => {
    const ping = await fetch(`${three}/v1/ping`);
    expect(await ping.text()).toBe("pong");
    expect(ping.headers.get(WORKERS_HEADER)).toBe("3");
    expect((await fetch(`${silent}/v1/ping`)).headers.get(WORKERS_HEADER)).toBeNull();
  });

  it("give twice their sum, asked of each server (its /run_code URL too) at once", async () => {
    const said = await askServers([three, `${five}/run_code`]);
    expect(said).toEqual([
      { url: three, workers: 3 },
      { url: five, workers: 5 },
    ]);
    const log = recordingLogger();
    expect(gateFromServers(said, log)).toBe(16);
    expect(log.lines).toEqual([
      `info: sandbox: the servers run 8 workers in all (${three}: 3, ${five}: 5): 16 programs at once`,
    ]);
  });

  it("leave out a server that does not answer, and say so", async () => {
    const log = recordingLogger();
    expect(gateFromServers(await askServers([dead, five]), log)).toBe(10);
    expect(log.lines[0]).toMatch(new RegExp(`^warn: sandbox: ${dead} did not answer GET /v1/ping`));
  });

  it("fall back to the stage's default, with a line that says why, when a server does not say or none answers", async () => {
    const log = recordingLogger();
    expect(gateFromServers(await askServers([three, silent]), log)).toBeNull();
    expect(log.lines).toEqual([
      expect.stringMatching(
        new RegExp(`^info: sandbox: ${silent} does not say how many workers it runs.*set sandbox.workers`),
      ),
    ]);
    // a server without the health path answers, and so is one that does not say
    expect(await askServers([noPing])).toEqual([{ url: noPing, workers: null }]);
    const none = recordingLogger();
    expect(gateFromServers(await askServers([dead]), none)).toBeNull();
    expect(none.lines.at(-1)).toMatch(/^warn: sandbox: no server answered to say its workers/);
  });

  it("are learned once per config with url and without workers, and never asked otherwise", async () => {
    const config = sandboxConfigSchema.parse({ url: [three, five] });
    const log = recordingLogger();
    await Promise.all([learnServerWorkers(config, log), learnServerWorkers(config, log)]);
    await learnServerWorkers(config, log);
    expect(serverPrograms(config)).toBe(16);
    expect(log.lines).toHaveLength(1);
    const fixed = sandboxConfigSchema.parse({ url: [three, five], workers: 4 });
    await learnServerWorkers(fixed, log);
    expect(serverPrograms(fixed)).toBeUndefined();
    const plain = sandboxConfigSchema.parse({ url: silent });
    await learnServerWorkers(plain, log);
    expect(serverPrograms(plain)).toBeUndefined();
  });
});
