// The security corpus: every hostile program runs through the HTTP server (as a SandboxFusion client
// would) and must be contained and reported with the right status; afterwards no process of the
// sandbox's uids is left on the host, nothing reached the host's loopback, and the server still serves.
import { createSocket, type Socket } from "node:dgram";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EmbeddedSandbox,
  type EmbeddedSandboxOptions,
  HttpSandboxClient,
} from "../../pipeline/sandbox/index.js";
import { type SandboxServer, startSandboxServer } from "../../pipeline/sandbox/server.js";
import { tempDir } from "../support/temp-dir.js";
import {
  probeIsolationReport,
  processesNamed,
  RUNNING_AS_ROOT,
  testConfig,
  waitForNoProcesses,
} from "./helpers.js";
import { type HostileContext, notLeaked } from "./hostile-corpus.js";
import { ESCAPE_PROGRAMS } from "./hostile-escapes.js";
import { EXHAUSTION_PROGRAMS } from "./hostile-exhaustion.js";

const HOSTILE_PROGRAMS = [...ESCAPE_PROGRAMS, ...EXHAUSTION_PROGRAMS];

const { mode, workDirCapped, cgroup } = await probeIsolationReport();
// uids of its own, so the leftover-process check cannot see other suites' sandboxes running meanwhile;
// programs that must finish get room to (those that must time out set their own run_timeout)
const config = testConfig({ uid_base: 64000, run_timeout_s: 120 });

/** Isolation variants the corpus runs under: what this machine picks, and (as root) the fallback path. */
const VARIANTS: { label: string; options: EmbeddedSandboxOptions; enabled: boolean }[] = [
  { label: `default isolation (${mode})`, options: {}, enabled: mode !== null },
  {
    label: "setuid mode with setpriv/prlimit/time",
    options: { mode: "setuid", launcher: "coreutils" },
    enabled: mode !== null && RUNNING_AS_ROOT,
  },
];

describe.each(VARIANTS.filter((v) => v.enabled))("hostile programs are contained: $label", ({ options }) => {
  let sandbox: EmbeddedSandbox;
  let server: SandboxServer;
  let client: HttpSandboxClient;
  let canary: Server;
  let canaryConnections = 0;
  let udpCanary: Socket;
  let udpDatagrams = 0;
  let sandboxUids: number[] = [];
  let secretDir: string;
  const ctx = {} as HostileContext;

  beforeAll(async () => {
    const secret = `canary-${Math.random().toString(36).slice(2)}-secret`;
    process.env.CODEFEEDBACK_TEST_CANARY_SECRET = secret;
    process.env.OPENAI_API_KEY ??= secret;
    secretDir = tempDir("sandbox-secret-");
    writeFileSync(join(secretDir, "secret.txt"), secret);
    canary = createServer((socket) => {
      canaryConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => canary.listen(0, "127.0.0.1", resolve));
    // it echoes, so a program that reached it would see an answer and say so
    udpCanary = createSocket("udp4", (message, from) => {
      udpDatagrams++;
      udpCanary.send(message, from.port, from.address);
    });
    await new Promise<void>((resolve) => udpCanary.bind(0, "127.0.0.1", resolve));
    sandbox = new EmbeddedSandbox(config, options);
    const isolation = await sandbox.isolation();
    sandboxUids = isolation.uids;
    if (options.mode) expect(isolation.mode).toBe(options.mode);
    if (options.launcher === "coreutils") {
      expect(isolation.launcher).toBe("coreutils");
      expect(isolation.spawner).toBe("node");
    }
    expect(isolation.cgroup).toBe(cgroup);
    server = await startSandboxServer({ runner: sandbox, port: 0, maxBodyBytes: 1 << 20 });
    // the client waits out the queue of the whole corpus on two workers, however slow the machine
    client = new HttpSandboxClient(
      testConfig({ url: server.url, workers: 16, run_timeout_s: 120, client_slack_s: 3600 }),
    );
    Object.assign(ctx, {
      canaryPort: (canary.address() as { port: number }).port,
      udpCanaryPort: udpCanary.address().port,
      secret,
      secretFile: join(secretDir, "secret.txt"),
      projectDir: process.cwd(),
      hostPid: process.pid,
      limits: {
        maxOutputBytes: config.max_output_bytes,
        workDirMb: config.limits.work_dir_mb,
        tmpMb: config.limits.tmp_mb,
        processes: config.limits.processes,
        memoryMb: config.limits.memory_mb,
        memoryHeadroomMb: config.limits.memory_headroom_mb,
      },
    } satisfies HostileContext);
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await sandbox?.close();
    canary?.close();
    udpCanary?.close();
    delete process.env.CODEFEEDBACK_TEST_CANARY_SECRET;
  });

  it("has a corpus of at least 30 programs", () => {
    expect(HOSTILE_PROGRAMS.length).toBeGreaterThanOrEqual(30);
  });

  // without root the work dir is on the host disk: filling it would fill the disk, so it is not
  // tried; without cgroups nothing caps a run's memory as a whole, so the multi-process bomb is not
  const runnable = HOSTILE_PROGRAMS.filter(
    (p) => (workDirCapped || !p.needsCappedWorkDir) && (cgroup !== null || !p.needsCgroup),
  );
  for (const program of runnable) {
    it.concurrent(program.name, async () => {
      const response = await client.run(program.request(ctx));
      try {
        program.check(response, ctx);
        notLeaked(response, ctx);
      } catch (error) {
        (error as Error).message += `\nresponse: ${JSON.stringify(response).slice(0, 2000)}`;
        throw error;
      }
    });
  }

  it.concurrent("runs untrusted code, children included, as an unprivileged host uid without capabilities", async () => {
    const marker = `uid-probe-${Math.random().toString(36).slice(2)}`;
    // they sleep until the test has looked at them (the run may wait behind the corpus) and kills them
    const run = client.run({
      language: "bash",
      code: `(exec -a ${marker}-child sleep 100000) & exec -a ${marker} sleep 100000`,
      run_timeout: 300,
    });
    let seen: string[] = [];
    while (seen.length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = processesNamed(marker);
    }
    for (const status of seen) {
      const uids = /^Uid:\s+(.*)$/m.exec(status)![1]!.split(/\s+/).map(Number);
      expect(uids.every((uid) => uid !== 0)).toBe(true);
      if (RUNNING_AS_ROOT) expect(sandboxUids).toContain(uids[0]);
      expect(/^CapEff:\s+(\S+)$/m.exec(status)![1]).toMatch(/^0+$/);
      expect(/^NoNewPrivs:\s+(\d)$/m.exec(status)![1]).toBe("1");
    }
    const [main] = processesNamed(`${marker}\0`);
    process.kill(Number(/^Pid:\s+(\d+)$/m.exec(main!)![1]), "SIGKILL");
    expect((await run).run_result?.signal).toBe("SIGKILL");
  });

  it("leaves no process behind and never reached the host's loopback", async () => {
    if (RUNNING_AS_ROOT) {
      expect(sandboxUids.length).toBe(config.workers);
      expect(await waitForNoProcesses(sandboxUids)).toEqual([]);
    }
    expect(canaryConnections).toBe(0);
    expect(udpDatagrams).toBe(0);
  });

  it("keeps serving afterwards", async () => {
    const ping = await fetch(`${server.url}/v1/ping`);
    expect(await ping.text()).toBe("pong");
    const response = await client.run({ language: "python", code: "print(6 * 7)" });
    expect(response.status).toBe("Success");
    expect(response.run_result?.stdout).toBe("42\n");
  });

  it("stops the sandboxes it built ahead when closed", async () => {
    await server.close();
    await sandbox.close();
    if (RUNNING_AS_ROOT) expect(await waitForNoProcesses(sandboxUids, { prepared: true })).toEqual([]);
  });
});

describe.skipIf(mode !== null)("without working isolation", () => {
  it("refuses untrusted code with a SandboxError that says what to do", async () => {
    const sandbox = new EmbeddedSandbox(config);
    const response = await sandbox.run({ language: "python", code: "print(1)" });
    await sandbox.close();
    expect(response.status).toBe("SandboxError");
    expect(response.message).toContain("bubblewrap");
  });
});
