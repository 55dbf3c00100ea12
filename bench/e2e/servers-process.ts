// Starts servers.ts as a child process and talks to it: its URLs, the LLM server's request count, its
// pid (for its CPU time, cpu.ts); with `--sandbox-server`, the sandbox's own server too.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { pipelineArgs, REPO_ROOT } from "../node.js";
import { heapFlags, startServerProcess } from "../server-process.js";
import type { CpuGroup } from "./cpu.js";

export interface Servers {
  hub: string;
  llm: string;
  /** the servers' process (the hub and the LLM test server share it; the hub is idle during the stages
   * that call the LLM) */
  pid: number | undefined;
  count(): Promise<{ requests: number; maxInFlight: number }>;
  stop(): void;
}

export async function startServers(root: string, latencyMs: number): Promise<Servers> {
  const script = fileURLToPath(new URL("./servers.ts", import.meta.url));
  const server = startServerProcess(
    script,
    ["--root", root, "--latency", String(latencyMs)],
    [...heapFlags(), "--import", "tsx"],
  );
  const next = async () => JSON.parse(await server.next()) as Record<string, unknown>;
  const urls = await next();
  return {
    hub: String(urls.hub),
    llm: String(urls.llm),
    pid: server.child.pid,
    count: async () => {
      const answer = next();
      server.child.kill("SIGUSR2");
      return (await answer) as { requests: number; maxInFlight: number };
    },
    stop: server.stop,
  };
}

/**
 * `--sandbox-server`: the sandbox as its own `pipeline sandbox serve` process (W workers) instead of
 * embedded in each stage's process, so the stage process starts no program itself. It is in `group`
 * from its start (the CPU of what it forks is counted there), and has run one program before it is
 * handed out: its one-off set-up (the /etc view, the isolation probes) is not the first stage's.
 */
export async function startSandboxServer(
  dir: string,
  workers: number,
  group?: CpuGroup,
): Promise<{ url: string; pid: number | undefined; stop(): Promise<void> }> {
  const config = path.join(dir, "sandbox-server.yaml");
  writeFileSync(config, `sandbox:\n  workers: ${workers}\n`);
  // started as `pnpm pipeline sandbox serve` starts it: package.json's node flags, from the repository
  const child = spawn(
    process.execPath,
    pipelineArgs(["sandbox", "serve", "--port", "0", "--config", config]),
    { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  group?.add(child.pid);
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the sandbox server exited with ${code}`)));
    lines.on("line", (line) => {
      const m = /listening on (\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
  });
  const warm = await fetch(`${url}/run_code`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: "print(1)", language: "python" }),
  });
  const answer = (await warm.json()) as { status?: string; message?: string };
  if (answer.status !== "Success") {
    child.kill("SIGTERM");
    throw new Error(`the sandbox server's first program failed: ${answer.status} ${answer.message}`);
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url,
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
