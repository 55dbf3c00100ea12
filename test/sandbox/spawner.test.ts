// Our spawner process (spawner.c, spawner.ts) forks the sandbox's host commands for us. What a
// command sees must be what Node's own spawn gave it: its stdin, stdout and stderr as pipes to us,
// exactly the environment and working directory asked for, no descriptor of ours, a process group of
// its own, the uid asked for; and we must learn how it ended. Each case runs both ways.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CommandOptions, HostProcess, runHostCommand } from "../../pipeline/sandbox/command.js";
import type { HostCommand } from "../../pipeline/sandbox/isolation.js";
import { helperBinary } from "../../pipeline/sandbox/launcher.js";
import { tempDir } from "../support/temp-dir.js";
import { parentOf, RUNNING_AS_ROOT } from "./helpers.js";

const SH = "/bin/sh";
const FD_PROBE = new URL("../support/fd-probe.ts", import.meta.url).pathname;
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;
const spawnerBinary = await helperBinary("spawn");
const starters: [string, string | null][] = [["Node's spawn", null]];
// gcc is a sandbox toolchain: CI has it, so the spawner is tested there
if (spawnerBinary) starters.push(["our spawner", spawnerBinary]);

const scratch = tempDir("spawner-");
const options = (extra: Partial<CommandOptions> = {}): CommandOptions => ({
  stdin: null,
  timeoutSeconds: 20,
  maxOutputBytes: 1 << 20,
  killOutputBytes: 4 << 20,
  ...extra,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Our spawner's pid: the child of ours running the spawner binary. */
function spawnerPid(binary: string): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      if (/^PPid:\s+(\d+)/m.exec(status)?.[1] !== String(process.pid)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")[0] === binary) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** Waits until our spawner runs a command whose command line holds `text`; returns the spawner's pid. */
async function spawnerRunning(binary: string, text = ""): Promise<number> {
  for (;;) {
    const pid = spawnerPid(binary);
    const running = (entry: string) => {
      try {
        return (
          parentOf(entry) === String(pid) && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)
        );
      } catch {
        return false;
      }
    };
    if (pid !== null && readdirSync("/proc").some(running)) return pid;
    await sleep(20);
  }
}

/** Our descriptors above fd 3 that are not close-on-exec (what a fork and exec of ours passes on). */
function inheritable(): string[] {
  return readdirSync("/proc/self/fd").filter((fd) => {
    if (Number(fd) <= 3) return false;
    try {
      const flags = /^flags:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      return flags !== undefined && (Number.parseInt(flags, 8) & 0o2000000) === 0;
    } catch {
      return false;
    }
  });
}

describe.each(starters)("starting a host command (%s)", (_name, spawner) => {
  const host = (file: string, args: string[], extra: Partial<HostCommand> = {}): HostCommand => ({
    file,
    args,
    env: { PATH: "/usr/bin:/bin" },
    cwd: scratch,
    ...(spawner ? { spawner } : {}),
    ...extra,
  });

  it("feeds stdin, keeps stdout and stderr apart, and reports the exit code", async () => {
    const { result } = await runHostCommand(
      host(SH, ["-c", "tr a-z A-Z; echo oops >&2; exit 3"]),
      options({ stdin: "hello\n" }),
    );
    expect(result).toMatchObject({ status: "Finished", return_code: 3, stdout: "HELLO\n", stderr: "oops\n" });
  });

  it("keeps all of an output larger than a pipe's buffer, written before the command is supervised", async () => {
    const { result } = await runHostCommand(
      host(SH, ["-c", "head -c 300000 /dev/zero | tr '\\0' x"]),
      options(),
    );
    expect(result.return_code).toBe(0);
    expect(result.stdout).toBe("x".repeat(300_000));
  });

  it("gives exactly the environment and directory asked for, and no descriptor of ours", async () => {
    const fd3 = join(scratch, "fd3.bin");
    writeFileSync(fd3, "filter bytes");
    const { result } = await runHostCommand(
      host(SH, ["-c", "env | sort; pwd; cat <&3"], {
        env: { PATH: "/usr/bin:/bin", ONLY: "this" },
        fd3File: fd3,
      }),
      options(),
    );
    const lines = result.stdout!.trim().split("\n");
    // sh adds PWD (and may add SHLVL, _): nothing of ours
    const env = lines.filter((line) => /^[A-Z_]+=/.test(line) && !/^(PWD|SHLVL|_)=/.test(line));
    expect(env).toEqual(["ONLY=this", "PATH=/usr/bin:/bin"]);
    expect(lines).toContain(scratch);
    expect(lines.at(-1)).toBe("filter bytes");
    // its descriptors, read from outside while it sleeps
    const sleeper = HostProcess.spawn(host("/bin/sleep", ["30"], { fd3File: fd3 }));
    let fds: string[] = [];
    while (fds.length === 0) {
      await sleep(20);
      const pid = sleeper.pid;
      if (pid === undefined) continue;
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("/bin/sleep"))
          fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        // not there yet
      }
    }
    sleeper.kill();
    await sleeper.settled();
    // Node's spawn passes on what this process inherited without close-on-exec (the sandbox's
    // launcher closes those later); the spawner passes on nothing of ours
    const expected = ["0", "1", "2", "3", ...(spawner ? [] : inheritable())];
    expect(fds.sort()).toEqual(expected.sort());
  });

  it("gives a prepared command its orders on fd 4 and takes its reports from fd 5", async () => {
    const sandbox = HostProcess.spawn(
      host(SH, ["-c", 'printf R >&5; orders=$(cat <&4); printf G >&5; exec 4<&- 5>&-; echo "got $orders"'], {
        controlFd: true,
      }),
    );
    await sandbox.ready();
    expect(sandbox.usable).toBe(true);
    const { result } = await sandbox.run(options(), Buffer.from("the orders"));
    expect(result.stdout).toBe("got the orders\n");
    expect(sandbox.tookOrders).toBe(true);
  });

  it("keeps no descriptor of a prepared command thrown away unused", async () => {
    const before = readdirSync("/proc/self/fd").length;
    for (let i = 0; i < 5; i++) {
      const unused = HostProcess.spawn(
        host(SH, ["-c", 'printf R >&5; orders=$(cat <&4); [ -z "$orders" ] && exit 125; exit 0'], {
          controlFd: true,
        }),
      );
      await unused.ready();
      unused.kill();
      await unused.settled();
    }
    // the pipes are let go a moment after the command ends (a descendant may still write); pipes
    // kept hold the test until its time limit
    while (readdirSync("/proc/self/fd").length > before) await sleep(20);
  });

  it("says a signal ended it, and a command that cannot start is an error naming it", async () => {
    const killed = await runHostCommand(host(SH, ["-c", "kill -TERM $$"]), options());
    expect(killed.result.signal).toBe("SIGTERM");
    const missing = await runHostCommand(host(join(scratch, "no-such-program"), []), options());
    expect(missing.result.status).toBe("Error");
    expect(missing.result.stderr).toContain("no-such-program");
    expect(missing.result.stderr).toContain("ENOENT");
    const badDir = await runHostCommand(
      host(SH, ["-c", "true"], { cwd: join(scratch, "no-such-dir") }),
      options(),
    );
    expect(badDir.result.status).toBe("Error");
    expect(badDir.result.stderr).toContain("ENOENT");
  });

  it("kills the command's whole process group at the time limit", async () => {
    const pidFile = join(scratch, `group-${spawner ? "spawner" : "node"}`);
    const { result, killedBy } = await runHostCommand(
      host(SH, ["-c", `sleep 100 & echo $! > ${pidFile}; sleep 100`]),
      options({ timeoutSeconds: 0.5 }),
    );
    expect(killedBy).toBe("timeout");
    expect(result.status).toBe("TimeLimitExceeded");
    const background = Number(readFileSync(pidFile, "utf8"));
    // a survivor holds the test until its time limit
    while (alive(background)) await sleep(20);
  });

  it.runIf(RUNNING_AS_ROOT)(
    "runs it as the uid and gid asked for, with no supplementary groups",
    async () => {
      const { result } = await runHostCommand(
        host(SH, ["-c", "id -u; id -g; id -G"], { uid: 65534, gid: 65534, cwd: "/" }),
        options(),
      );
      expect(result.stdout).toBe("65534\n65534\n65534\n");
    },
  );

  it("starts many commands at once and gives each its own output", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        runHostCommand(
          host(SH, ["-c", `read line; echo "$line $1"`, "sh", String(i)]),
          options({ stdin: `n${i}\n` }),
        ),
      ),
    );
    expect(outcomes.map(({ result }) => result.stdout)).toEqual(
      Array.from({ length: 60 }, (_, i) => `n${i} ${i}\n`),
    );
  });
});

describe.runIf(spawnerBinary)("our spawner process", () => {
  const host = (args: string[]): HostCommand => ({
    file: SH,
    args,
    env: { PATH: "/usr/bin:/bin" },
    cwd: scratch,
    spawner: spawnerBinary!,
  });

  it("ends what it started when it dies, and a new one serves the next command", async () => {
    const command = HostProcess.spawn(host(["-c", "sleep 100"]));
    const running = command.run(options({ timeoutSeconds: 600 }));
    // the spawner runs it and has told us its pid
    const pid = await spawnerRunning(spawnerBinary!, "sleep 100");
    while (command.pid === undefined) await sleep(20);
    process.kill(pid, "SIGKILL");
    const { result } = await running;
    expect(result.signal).toBe("SIGKILL");
    const next = await runHostCommand(host(["-c", "echo again"]), options());
    expect(next.result.stdout).toBe("again\n");
    const replacement = spawnerPid(spawnerBinary!);
    expect(replacement).not.toBeNull();
    expect(replacement).not.toBe(pid);
  });

  it("starts commands side by side: one stuck before its exec holds up no other", async () => {
    // opening a FIFO for reading blocks until a writer comes: the child sits before its exec
    const fifo = join(scratch, "stuck-fifo");
    spawnSync("/usr/bin/mkfifo", [fifo]);
    const stuck = runHostCommand({ ...host(["-c", "cat <&3"]), fd3File: fifo }, options());
    await spawnerRunning(spawnerBinary!);
    // held up behind the stuck one, it would hold the test until its time limit
    const other = await runHostCommand(host(["-c", "echo meanwhile"]), options());
    // a writer comes: the stuck one starts, reads it and ends
    const writer = spawn(SH, ["-c", `printf released > ${fifo}`]);
    const written = new Promise((resolve) => writer.on("close", resolve));
    expect(other.result.stdout).toBe("meanwhile\n");
    const { result } = await stuck;
    expect(result.stdout).toBe("released");
    await written;
  });

  it("keeps no other command's pipes open in a command stuck before its exec", async () => {
    const fifo = join(scratch, "stuck-fifo-2");
    spawnSync("/usr/bin/mkfifo", [fifo]);
    // both asked for at once: the stuck one forks while the other's pipes are still the spawner's
    const prepared = HostProcess.spawn({
      ...host(["-c", 'printf R >&5; orders=$(cat <&4); printf G >&5; exec 4<&- 5>&-; echo "got $orders"']),
      controlFd: true,
    });
    const stuck = runHostCommand(
      { ...host(["-c", "cat <&3"]), fd3File: fifo },
      options({ timeoutSeconds: 0.5 }),
    );
    await prepared.ready();
    // its orders end at EOF on fd 4: only if no one else holds the pipe's write end (else the test
    // waits until its time limit)
    const outcome = await prepared.run(options(), Buffer.from("the orders"));
    expect(outcome.result.stdout).toBe("got the orders\n");
    // and a command that never reached its exec is still killed at its time limit
    expect((await stuck).killedBy).toBe("timeout");
  });

  it("ignores a terminal's signals: a Ctrl-C is for the pipeline, which finishes its runs", async () => {
    // long enough to be found in /proc on a slow machine before it ends
    const running = runHostCommand(host(["-c", "sleep 3; echo done"]), options());
    const pid = await spawnerRunning(spawnerBinary!, "echo done");
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const) process.kill(pid, signal);
    const { result } = await running;
    expect(result).toMatchObject({ return_code: 0, stdout: "done\n", signal: null });
    expect(spawnerPid(spawnerBinary!)).toBe(pid);
  });

  it("answers a command it cannot start for want of descriptors as that command's error, and serves on", async () => {
    await runHostCommand(host(["-c", "true"]), options());
    const pid = spawnerPid(spawnerBinary!);
    expect(pid).not.toBeNull();
    // the soft limit only: raising a hard limit again may not be ours to do
    const prlimit = (nofile: string) =>
      spawnSync("/usr/bin/prlimit", [`--pid=${pid}`, `--nofile=${nofile}:`], { encoding: "utf8" });
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))![1]!;
    // 0-2, the placeholders 3-5 and its signalfd: no room for a command's pipes
    expect(prlimit("8").status).toBe(0);
    try {
      const refused = await runHostCommand(host(["-c", "echo never"]), options());
      expect(refused.result.status).toBe("Error");
      expect(refused.result.stderr).toContain("EMFILE");
    } finally {
      expect(prlimit(soft).status).toBe(0);
    }
    const next = await runHostCommand(host(["-c", "echo served"]), options());
    expect(next.result, JSON.stringify(next.result)).toMatchObject({ stdout: "served\n" });
    expect(spawnerPid(spawnerBinary!)).toBe(pid);
  });

  it("leaves at once when started by another process than the one it names", () => {
    const result = spawnSync(spawnerBinary!, ["1"], { input: "", timeout: 5000 });
    expect(result.status).toBe(0);
    expect(result.signal).toBeNull();
  });
});

describe("a descriptor the sandbox's own process inherited", () => {
  // Node's spawn and bwrap both pass on every descriptor not marked close-on-exec; the spawner and
  // the launcher close them, and without either (no gcc) a shell does before the program starts
  const variants: [string, string, string][] = [
    ["launcher, sandboxes built ahead", "auto", "prepare"],
    ["launcher, sandboxes built on demand", "auto", "no-prepare"],
  ];
  if (RUNNING_AS_ROOT) variants.push(["setpriv/prlimit/time", "coreutils", "no-prepare"]);
  it.each(variants)("never reaches the program (%s)", async (_name, launcher, prepare) => {
    const secret = join(scratch, `inherited-${launcher}-${prepare}`);
    writeFileSync(secret, "HOST-SECRET-CONTENT");
    const held = openSync(secret, "r");
    try {
      const stdio: (string | number)[] = [
        "ignore",
        "pipe",
        "pipe",
        "ignore",
        "ignore",
        "ignore",
        "ignore",
        held,
      ];
      const child = spawn(process.execPath, ["--import", TSX, FD_PROBE, "7", launcher, prepare], {
        stdio: stdio as ("ignore" | "pipe" | number)[],
      });
      let out = "";
      let err = "";
      child.stdout!.on("data", (chunk) => (out += chunk));
      child.stderr!.on("data", (chunk) => (err += chunk));
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(code, err).toBe(0);
      const runs = JSON.parse(out) as string[];
      expect(runs).toHaveLength(2);
      for (const seen of runs) {
        expect(seen).not.toContain("HOST-SECRET-CONTENT");
        // ls's own directory descriptor is the one above stderr
        expect(seen.split("\n")[0]!.trim().split(" ")).toEqual(["0", "1", "2", "3"]);
      }
    } finally {
      closeSync(held);
    }
  });
});
