// A finished sample run for the review tests: `pnpm pipeline run export` on configs/sample.yaml against
// the local LLM server (answering as the end-to-end benchmark does), over a copy of the bundled samples
// with one more Magicoder row: a Go task whose answer panics when run, and whose query carries markup
// that must never run in a page. Validate drops nothing, so that dialogue reaches the release.
import { appendFileSync, cpSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { benchAnswer } from "../../bench/e2e/answers.js";
import { onSamples, ROOT, runCli } from "../support/cli.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";

/** In the added row's query: a script, an image whose error handler runs script, a javascript: link. */
export const HOSTILE =
  '<script>window.pwned = "script"</script> <img src="x" onerror="window.pwned = \'img\'"> <a href="javascript:window.pwned=\'link\'">docs</a>';
export const FAILING_GO =
  'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar seen []int\n\tfmt.Println(seen[3])\n}';
const QUERY = `Write a Go program that prints the fourth element a slice has seen so far. ${HOSTILE}`;

/** The samples, plus the Go row, under `dir`. */
function samples(dir: string): string {
  const copy = join(dir, "samples");
  cpSync(join(ROOT, "data/sample"), copy, { recursive: true });
  const row = { lang: "go", index: 9001, problem: QUERY, solution: `\`\`\`go\n${FAILING_GO}\n\`\`\`` };
  appendFileSync(
    join(copy, "ise-uiuc/Magicoder-OSS-Instruct-75K/data-oss_instruct-decontaminated.jsonl"),
    `${JSON.stringify(row)}\n`,
  );
  return copy;
}

/** The options of every command on the run in `dataDir`. */
export const sampleArgs = (dataDir: string) =>
  onSamples(dataDir, [
    `hub.endpoint=file:${join(dataDir, "..", "samples")}`,
    "llm.scorer.provider=openai",
    "stages.validate.drop=[]",
    "stages.validate.gates.drop=[]",
  ]);

/** Runs the sample to its release in `<dir>/data` (again: export after new marks); returns that data dir. */
export async function runToRelease(dir: string): Promise<string> {
  samples(dir);
  const dataDir = join(dir, "data");
  const server: LlmServer = await startLlmServer({
    latencyMs: 1,
    // the Go task passes the filter's two prompts
    rules: [
      {
        match: (r) => r.body.messages.at(-1)!.content.includes("a slice has seen so far"),
        reply: "Score: 5",
      },
    ],
    fallback: benchAnswer,
  });
  try {
    const run = await runCli(["run", "export", ...sampleArgs(dataDir)], {
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" },
    });
    expect(run.code, run.stderr).toBe(0);
  } finally {
    await server.close();
  }
  return dataDir;
}
