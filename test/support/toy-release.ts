// A release stage for the toy pipeline, named `bundle` (not `export`: where the release lives comes
// from the stage that declares it): it writes the push fixture's files into its directory, as export
// writes the dataset, with a temporary a killed run would leave, and lists them in its summary.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { exportFixtureFiles, sha256 } from "../hub/push-fixtures.js";
import { TOY_STAGES } from "./toy-stages.js";

const summarySchema = z.object({
  files: z.array(z.object({ name: z.string(), bytes: z.number(), sha256: z.string() })),
});

export const bundleStage = defineStage<{ variant: string }, unknown, z.infer<typeof summarySchema>>({
  name: "bundle",
  description: "writes a release of fixed files (the push tests' fixture)",
  upstream: [],
  kind: "global",
  configSchema: z.object({ variant: z.string().default("") }).strict(),
  summarySchema,
  release: { files: (summary) => summary.files },
  async run(ctx) {
    const dir = path.join(ctx.dataDir, ctx.name);
    await mkdir(dir, { recursive: true });
    const files = Object.entries(exportFixtureFiles(ctx.config.variant)).filter(
      ([name]) => name !== "report.html",
    );
    for (const [name, bytes] of files) await writeFile(path.join(dir, name), bytes);
    await writeFile(path.join(dir, "code-feedback.jsonl.tmp-4242"), "half a file");
    return { files: files.map(([name, bytes]) => ({ name, bytes: bytes.length, sha256: sha256(bytes) })) };
  },
});

/** The toy stages and the release stage, for the CLI (toy-release-cli.ts). */
export const TOY_RELEASE_STAGES = [...TOY_STAGES, bundleStage] as Stage<unknown>[];
