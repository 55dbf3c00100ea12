// An answer is in the response cache, committed and visible to any other process, before the caller
// (and so the stage's record) gets it: a kill -9 after that instant never pays for it again. What a
// kill can still cost is only the requests whose answers had not all arrived yet (README).
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { UsageMeter } from "../../pipeline/usage.js";
import { ask, serverPerTest, testConfig, testService } from "./helpers.js";

// answers arrive out of order and several at once
const t = serverPerTest({ latencyMs: (r) => (r.n % 7) * 5 });

describe("an answer is stored before anything else is done with it", () => {
  for (const stream of [false, true]) {
    it(`each answer is committed before its chat resolves${stream ? " (streamed)" : ""}`, async () => {
      const service = testService(testConfig(t.server.url, { concurrency: 8, stream }), t.dir);
      const client = service.client("scorer", new UsageMeter());
      const seen: number[] = [];
      let reader: Database.Database | undefined;
      // a second connection, as another process would see the file after a kill of this one
      const committed = () => {
        reader ??= new Database(join(t.dir, "llm-cache.sqlite"), { readonly: true });
        return (reader.prepare("SELECT count(*) AS n FROM responses").get() as { n: number }).n;
      };
      let resolved = 0;
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          client.chat(ask(`question number ${i} ${"?".repeat(i)}`)).then(() => {
            resolved++;
            seen.push(committed() - resolved);
          }),
        ),
      );
      reader?.close();
      await service.close();
      expect(seen).toHaveLength(24);
      // at every resolution at least as many answers were on disk as chats had resolved
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(0);
    });
  }
});
