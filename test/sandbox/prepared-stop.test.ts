// Stopping a sandbox built ahead while bwrap is still building it: nothing of it may run on, and
// neither a run nor the sandbox's close() may wait for ever on the fd 4 a half-built orphan holds.
// A stand-in for bwrap with the same shape (STAND_IN) sets the ordering; it is started both by
// Node's own spawn and by our spawner process.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HostProcess } from "../../pipeline/sandbox/command.js";
import { SANDBOX_TOOLS } from "../../pipeline/sandbox/isolation.js";
import { helperBinary } from "../../pipeline/sandbox/launcher.js";
import { tempDir } from "../support/temp-dir.js";

// bwrap's sandbox init sits in a session of its own and arms --die-with-parent only once the sandbox
// is built, so a process-group kill in between left it running, orphaned, with our fd 4 open: 'close'
// never came (seen under load as a C compile error whose run-step sandbox was thrown away mid-build).
// This stand-in has the same shape: an "init" in a new session builds for a while, only then arms a
// parent-death signal (setpriv --pdeathsig, as bwrap's prctl) and speaks the launcher's protocol:
// "R" on fd 5, orders on fd 4 until EOF (none: exit 125, unused), "G" on fd 5, then the program.
const STAND_IN = `
mode=$1; pidfile=$2; build_s=$3
setsid sh -c '
  echo $$ > "$1"
  sleep "$2"
  exec setpriv --pdeathsig KILL -- sh -c "
    printf R >&5
    orders=\\$(cat <&4)
    [ -z \\"\\$orders\\" ] && exit 125
    printf G >&5
    exec sleep 1000"
' init "$pidfile" "$build_s" &
# "orphaning": our child is gone (killed, crashed) while the init it started still holds fd 4
[ "$mode" = orphaning ] && exit 0
wait
`;

const scratch = tempDir("prepared-stop-");
let files = 0;
const started: number[] = [];

afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone, as it should be
    }
  }
});

/** Spawns the stand-in and waits until its init exists (so a kill now lands mid-build). */
async function standIn(mode: "waiting" | "orphaning", buildSeconds: number, spawner: string | null) {
  const pidFile = join(scratch, `init-${files++}`);
  const sandbox = HostProcess.spawn({
    file: SANDBOX_TOOLS.shell,
    args: ["-c", STAND_IN, "stand-in", mode, pidFile, String(buildSeconds)],
    env: { PATH: "/usr/bin:/bin" },
    cwd: "/",
    controlFd: true,
    ...(spawner ? { spawner } : {}),
  });
  for (;;) {
    const text = readText(pidFile);
    if (text?.endsWith("\n")) {
      const init = Number(text);
      started.push(init);
      return { sandbox, init };
    }
    await sleep(10);
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` is still a live process (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  const status = readText(`/proc/${pid}/status`);
  return status !== null && !/^State:\s+Z/m.test(status);
}

/** Resolves once `pid` is gone. What these tests guard against is a hang: it fails at the test's limit. */
async function gone(pid: number): Promise<void> {
  while (alive(pid)) await sleep(20);
}

const spawnerBinary = await helperBinary("spawn");
const starters: [string, string | null][] = [["Node's spawn", null]];
// gcc is a sandbox toolchain: CI has it, so the spawner is tested there
if (spawnerBinary) starters.push(["our spawner", spawnerBinary]);

describe.each(starters)(
  "stopping a sandbox built ahead while it is still being built (%s)",
  (_name, spawner) => {
    it("lets an unused one leave on EOF instead of orphaning it, and is done once it is gone", async () => {
      const { sandbox, init } = await standIn("waiting", 0.5, spawner);
      sandbox.kill();
      const settled = sandbox.settled();
      // told to leave: never handed to a request while it goes
      expect(sandbox.usable).toBe(false);
      await settled;
      expect(sandbox.tookOrders).toBe(false);
      expect(alive(init)).toBe(false);
    });

    it("kills a run stopped mid-build once the sandbox is built, so nothing of it runs on", async () => {
      const { sandbox, init } = await standIn("waiting", 1, spawner);
      const outcome = await sandbox.run(
        { stdin: null, timeoutSeconds: 0.1, maxOutputBytes: 1024, killOutputBytes: 4096 },
        Buffer.from("orders\0"),
      );
      expect(outcome.killedBy).toBe("timeout");
      expect(outcome.result.status).toBe("TimeLimitExceeded");
      await gone(init);
    });

    it("stops waiting for fd 4 once our child is gone, and the orphan holding it reads EOF and leaves", async () => {
      const { sandbox, init } = await standIn("orphaning", 0.2, spawner);
      await sandbox.settled();
      await gone(init);
    });
  },
);
