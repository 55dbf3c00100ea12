// What the sandbox stopped or denied, as a typed part of the result: from the sandbox's own report
// (the kernel's counters of refused forks and memory kills) whatever the program did with the error,
// and, for the network and writes outside the work dir, from what a clean run printed.
import { afterAll, describe, expect, it } from "vitest";
import { classifyResponse } from "../../pipeline/execution/result.js";
import { runBlock } from "../../pipeline/execution/run.js";
import { EmbeddedSandbox } from "../../pipeline/sandbox/index.js";
import type { RunCodeResponse } from "../../pipeline/sandbox/types.js";
import { FORK_TO_THE_CAP, probeIsolationReport, testConfig } from "../sandbox/helpers.js";

const sandbox = new EmbeddedSandbox(testConfig());
afterAll(() => sandbox.close());
const report = await probeIsolationReport();
const withCgroups = report.cgroup !== null;
// our launcher in a network namespace of the run's own counts refused packets
const isolated = report.mode !== "none" && report.launcher === "built";

const response = (run: Partial<NonNullable<RunCodeResponse["run_result"]>>): RunCodeResponse => ({
  status: "Success",
  message: "",
  compile_result: null,
  run_result: {
    status: "Finished",
    execution_time: 0.1,
    return_code: 0,
    stdout: "",
    stderr: "",
    ...run,
  },
  files: {},
});

describe("stopped", () => {
  it("takes the sandbox's report first, and reads a clean run's output only for what it cannot see", () => {
    expect(classifyResponse(response({ stopped_by: ["processes"] }), "python").stopped).toBe("processes");
    expect(
      classifyResponse(response({ stdout: "[Errno 101] Network is unreachable" }), "python").stopped,
    ).toBe("network");
    expect(
      classifyResponse(response({ stdout: "[Errno 30] Read-only file system: '/etc/x'" }), "python").stopped,
    ).toBe("write-denied");
    expect(classifyResponse(response({ stdout: "MemoryError\n" }), "python").stopped).toBe("memory");
    // a failing run's error is validate's to explain (needs-network), not a stop
    const failed = response({ return_code: 1, stderr: "OSError: [Errno 101] Network is unreachable" });
    expect(classifyResponse(failed, "python").stopped).toBeUndefined();
    expect(classifyResponse(response({ stdout: "42\n" }), "python").stopped).toBeUndefined();
  });

  it.skipIf(!withCgroups)(
    "a fork refused at the process cap is reported even when the program hides it",
    async () => {
      const code = `import os, time\n${FORK_TO_THE_CAP}\nprint("fine")`;
      const result = await runBlock(sandbox, code, "python", { runTimeoutS: 10 });
      expect(result).toMatchObject({ status: "success", stdout: "fine\n", stopped: "processes" });
      const plain = await runBlock(sandbox, "import os\nprint(len(os.environ) >= 0)", "python");
      expect(plain.status).toBe("success");
      expect(plain.stopped).toBeUndefined();
    },
  );

  it.skipIf(!withCgroups)(
    "processes the kernel killed at the tree's memory cap are reported as memory",
    async () => {
      // Each child stays under its own address-space limit; together they pass the tree's cap. The
      // kernel kills only when nothing else frees memory: children that exit once they have their
      // block, or a parent that forks slower than they finish, would let it wait instead (an exiting
      // process is not killed, nor counted) and nothing is stopped. So every child holds its block
      // until the parent has seen each one either holding it or killed; the parent hides the kills.
      const code = `import os
release, hold = os.pipe()
children = []
for _ in range(8):
    ready, told = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(hold)
        block = b"x" * (90 * 1024 * 1024)
        os.write(told, b"!")
        os.read(release, 1)
        os._exit(0)
    os.close(told)
    os.read(ready, 1)  # b"" when the kernel killed the child first
    os.close(ready)
    children.append(pid)
os.close(hold)
statuses = [os.waitpid(pid, 0)[1] for pid in children]
print("killed", sum(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses))`;
      const result = await runBlock(sandbox, code, "python", { runTimeoutS: 10, memoryMb: 128 });
      expect(result).toMatchObject({ status: "success", stopped: "memory" });
      expect(result.stdout).toMatch(/^killed [1-8]\n$/);
    },
  );

  it.skipIf(!isolated)(
    "a connection or a name lookup refused in the sandbox's network is reported, even when hidden",
    async () => {
      const code = (target: string) => `import socket
try:
    socket.create_connection((${target}, 80), timeout=2)
except OSError:
    pass
print("fine")`;
      for (const target of ['"203.0.113.1"', '"name.invalid"']) {
        const result = await runBlock(sandbox, code(target), "python");
        expect(result, target).toMatchObject({ status: "success", stdout: "fine\n", stopped: "network" });
      }
      // a server and its client inside the program stay on the loopback: no stop
      const local = `import socket
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
client = socket.create_connection(server.getsockname())
print("connected")`;
      const result = await runBlock(sandbox, local, "python");
      expect(result).toMatchObject({ status: "success", stdout: "connected\n" });
      expect(result.stopped).toBeUndefined();
    },
  );

  it("a refused connection and a write outside the work dir, swallowed but printed, are stops", async () => {
    const code = `import socket
try:
    socket.create_connection(("203.0.113.1", 80), timeout=2)
except OSError as e:
    print(e)`;
    expect((await runBlock(sandbox, code, "python")).stopped).toBe("network");
    const write = `try:\n    open("/usr/probe", "w")\nexcept OSError as e:\n    print(e)`;
    expect((await runBlock(sandbox, write, "python")).stopped).toBe("write-denied");
  });
});
