// `run simulate|correct --dry-run` on the bundled sample counts exactly the requests a run of the
// sample then sends to the scripted test server, whose dialogues take the course each stage's plan
// assumes (code that runs at once, mistakes that fail as meant): a plan that drifts from the stage's
// code (a request added to a dialogue, or one fewer) fails here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { STRONG_MODEL, scriptedReply, WEAK_MODEL } from "../dialogue-kit/script.js";
import { type LlmServer, startLlmServer } from "../support/llm-server.js";
import { tempDir } from "../support/temp-dir.js";
import { cli } from "./kit.js";

const SETS = [
  ["llm.weak.model", WEAK_MODEL],
  ["llm.strong.model", STRONG_MODEL],
  ["llm.weak.provider", "openai"],
  ["llm.strong.provider", "openai"],
].flatMap(([k, v]) => ["--set", `${k}=${v}`]);

let server: LlmServer;
const env = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-dialogue-estimate" });
beforeAll(async () => {
  server = await startLlmServer({ fallback: scriptedReply });
});
afterAll(async () => {
  await server.close();
});

describe("simulate and correct --dry-run", () => {
  it("estimate as many requests as a run of the sample sends", async () => {
    const dir = tempDir("cf-dialogue-estimate-");
    const filter = await cli(dir, ["run", "filter", ...SETS], env());
    expect(filter.code, filter.stderr).toBe(0);
    for (const stage of ["simulate", "correct"]) {
      server.reset();
      const dry = await cli(dir, ["run", stage, "--dry-run", ...SETS], env());
      expect(dry.code, dry.stderr).toBe(0);
      const estimated = Number(new RegExp(`${stage}: would send (\\d+) requests`).exec(dry.stderr)?.[1]);
      expect(server.count).toBe(0);
      expect(new StageStore(dir, stage).manifest()).toBeUndefined();

      const run = await cli(dir, ["run", stage, "--only", ...SETS], env());
      expect(run.code, run.stderr).toBe(0);
      const usage = new StageStore(dir, stage).manifest()!.usage!;
      expect(usage).toMatchObject({ requests: server.count, cachedRequests: 0 });
      expect(estimated, stage).toBe(server.count);
      expect(server.count).toBeGreaterThan(0);
    }
  });
});
