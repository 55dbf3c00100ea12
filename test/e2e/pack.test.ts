// `pnpm pipeline run pack --config configs/sample.yaml` end to end in a child process: the bundled
// samples through download, normalize, dedup, filter (against the test LLM server) and pack (the
// sample config's lexical embedder); `cat pack` prints valid dialogues; `--force` gives the same
// dialogues; and a `kill -9` while an embeddings endpoint is answering loses at most the batch in
// flight, with the rerun's dialogues identical to an uninterrupted run's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDialogue } from "../../pipeline/dialogue.js";
import { type EmbeddingsServer, startEmbeddingsServer } from "../support/embeddings-server.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";
import { cli, SECRET } from "./kit.js";

let llm: LlmServer;
const env = () => ({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: SECRET });

beforeAll(async () => {
  llm = await startLlmServer({ requireKey: SECRET });
});
afterAll(async () => {
  await llm.close();
});

function dialoguesOf(stdout: string) {
  const lines = stdout.split("\n").filter((l) => l !== "");
  return lines.map((line) => {
    const parsed = parseDialogue(JSON.parse(line));
    if (!parsed.ok) throw new Error(`invalid dialogue: ${parsed.error}\n${line}`);
    return parsed.dialogue;
  });
}

describe("pack on the sample config", () => {
  it("runs end to end, prints valid dialogues, and a --force rerun gives the same ones", async () => {
    const dir = tempDir("cf-pack-e2e-");
    const run = await cli(dir, ["run", "pack"], env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/single-turn-packing: \d+ dialogues, \d+ turns, .* \(paper: 16,600 dialogues/);
    expect(run.stderr).toMatch(/embeddings by lexical:v1/);
    const cat = await cli(dir, ["cat", "pack"], env());
    expect(cat.code, cat.stderr).toBe(0);
    const dialogues = dialoguesOf(cat.stdout);
    expect(dialogues.length).toBeGreaterThan(0);
    for (const d of dialogues) {
      expect(d.method).toBe("single-turn-packing");
      // the default join ([1]): the visited query and one neighbour, as the paper's table counts it
      expect(d.messages.length).toBe(4);
      expect(d.sources.length * 2).toBe(d.messages.length);
    }

    const forced = await cli(dir, ["run", "pack", "--force"], env());
    expect(forced.code, forced.stderr).toBe(0);
    // nothing is embedded twice
    expect(forced.stderr).toMatch(/embeddings by lexical:v1\S*: \d+ cached, 0 computed/);
    const again = await cli(dir, ["cat", "pack"], env());
    expect(again.stdout).toBe(cat.stdout);
  });

  describe("killed while embedding through an endpoint", () => {
    let embeddings: EmbeddingsServer;
    beforeAll(async () => {
      embeddings = await startEmbeddingsServer({ latencyMs: 150 });
    });
    afterAll(() => embeddings.close());
    const openai = () => [
      "--set",
      `stages.pack.embedder={kind: openai, model: e2e-embed, base_url: "${embeddings.url}", batch_size: 2, concurrency: 1}`,
    ];

    it("loses at most the batch in flight and ends with the dialogues of an uninterrupted run", async () => {
      const reference = tempDir("cf-pack-e2e-");
      const ref = await cli(reference, ["run", "pack", ...openai()], env());
      expect(ref.code, ref.stderr).toBe(0);
      const batches = embeddings.requests.length;
      expect(batches).toBeGreaterThan(4);
      const expected = (await cli(reference, ["cat", "pack"], env())).stdout;
      expect(dialoguesOf(expected).length).toBeGreaterThan(0);

      const dir = tempDir("cf-pack-e2e-");
      const filter = await cli(dir, ["run", "filter"], env());
      expect(filter.code, filter.stderr).toBe(0);
      const start = embeddings.requests.length;
      const killed = await cli(
        dir,
        ["run", "pack", ...openai()],
        env(),
        () => embeddings.requests.length - start >= 3,
      );
      expect(killed.signal).toBe("SIGKILL");
      const beforeRerun = embeddings.requests.length;
      const rerun = await cli(dir, ["run", "pack", ...openai()], env());
      expect(rerun.code, rerun.stderr).toBe(0);
      // every batch answered before the kill was cached, except perhaps the one in flight
      const asked = embeddings.requests.length - beforeRerun;
      expect(asked).toBeLessThanOrEqual(batches - (beforeRerun - start) + 1);
      expect(beforeRerun - start + asked).toBeLessThanOrEqual(batches + 1);
      const got = (await cli(dir, ["cat", "pack"], env())).stdout;
      expect(got).toBe(expected);
    });
  });
});
