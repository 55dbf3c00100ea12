// The root of the YAML configuration. Each service validates its own section; each stage validates
// `stages.<name>` with its own schema (see pipeline/stage.ts), so this file knows no stage.
import { z } from "zod";
import { evalConfigSchema } from "../eval/config.js";
import { operational } from "../hash.js";
import { hubConfigSchema } from "../hub/config.js";
import { llmConfigSchema } from "../llm/config.js";
import { sandboxConfigSchema } from "../sandbox/config.js";
import { launchConfigSchema } from "./launch.js";

export const rootConfigSchema = z
  .object({
    /** where stage outputs go; relative paths resolve against the current directory */
    data_dir: z.string().min(1).default("data"),
    hub: hubConfigSchema.default(hubConfigSchema.parse({})),
    llm: llmConfigSchema.default(llmConfigSchema.parse({})),
    sandbox: sandboxConfigSchema.default(sandboxConfigSchema.parse({})),
    eval: evalConfigSchema.default(evalConfigSchema.parse({})),
    /** `pnpm pipeline launch`: shards and the Slurm and Kubernetes settings */
    launch: operational(launchConfigSchema.default(launchConfigSchema.parse({}))),
    stages: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export type RootConfig = z.infer<typeof rootConfigSchema>;
