// Starts servers.ts as a child process and talks to it: its URLs, the LLM server's request count.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export interface Servers {
  hub: string;
  llm: string;
  count(): Promise<{ requests: number; maxInFlight: number }>;
  stop(): void;
}

export async function startServers(root: string, latencyMs: number): Promise<Servers> {
  const script = fileURLToPath(new URL("./servers.ts", import.meta.url));
  const flags = process.execArgv.filter((a) => a.startsWith("--max-"));
  const child = spawn(
    process.execPath,
    [...flags, "--import", "tsx", script, "--root", root, "--latency", String(latencyMs)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`the benchmark's servers exited with ${code}`)));
      lines.once("line", (line) => resolve(JSON.parse(line)));
    });
  const urls = await next();
  return {
    hub: String(urls.hub),
    llm: String(urls.llm),
    count: async () => {
      const answer = next();
      child.kill("SIGUSR2");
      return (await answer) as { requests: number; maxInFlight: number };
    },
    stop: () => child.kill("SIGTERM"),
  };
}
