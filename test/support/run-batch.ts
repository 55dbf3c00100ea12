// A stand-in for `vllm run-batch` in tests: reads a batch input file and writes its output file,
// each line answered by the OpenAI-compatible server at $OPENAI_BASE_URL. `--partial N` answers only
// the first N lines (a job cut short); `--garbage` writes a line that is not JSON.
//   tsx test/support/run-batch.ts -i <input> -o <output> --model <model> [--partial N] [--garbage]
import { readFileSync, writeFileSync } from "node:fs";

export async function runBatch(
  input: string,
  output: string,
  baseUrl: string,
  options: { partial?: number; garbage?: boolean; apiKey?: string | undefined } = {},
): Promise<number> {
  const lines = readFileSync(input, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const out: string[] = [];
  for (const [i, line] of lines.slice(0, options.partial ?? lines.length).entries()) {
    const request = JSON.parse(line) as { custom_id: string; body: object };
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify(request.body),
    });
    out.push(
      JSON.stringify({
        id: `vllm-${i}`,
        custom_id: request.custom_id,
        response: {
          status_code: response.status,
          request_id: `vllm-batch-${i}`,
          body: await response.json(),
        },
        error: null,
      }),
    );
  }
  if (options.garbage) out.splice(1, 0, "this is not json");
  writeFileSync(output, out.length ? `${out.join("\n")}\n` : "");
  return out.length;
}

if (process.argv[1]?.endsWith("run-batch.ts")) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
  };
  const partial = arg("--partial");
  await runBatch(arg("-i")!, arg("-o")!, process.env.OPENAI_BASE_URL!, {
    ...(partial ? { partial: Number(partial) } : {}),
    garbage: process.argv.includes("--garbage"),
    apiKey: process.env.OPENAI_API_KEY,
  });
}
