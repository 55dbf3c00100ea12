// `llm.<role>.batch`: the role's cache misses go to a batch job instead of one request each, at the
// provider's batch price. `openai`: the Files and Batches APIs of the role's endpoint; `files`: JSONL
// files a tool such as `vllm run-batch` answers offline, read back on the next run. See docs/llm.md.
import { z } from "zod";

/** what hosted Batch APIs charge, as a share of the online price */
export const DEFAULT_BATCH_DISCOUNT = 0.5;

export const DEFAULT_BATCH_COMMAND = "vllm run-batch -i {input} -o {output} --model {model}";

export const batchSchema = z
  .object({
    provider: z.enum(["openai", "files"]),
    /** `files`: how the input becomes the output; `{input}`, `{output}` and `{model}` are filled in */
    command: z.string().min(1).default(DEFAULT_BATCH_COMMAND),
    /** `openai`: how long the provider may take (its Batch API accepts `24h`) */
    completion_window: z.string().min(1).default("24h"),
    /** a batch file holds at most this many requests, and at most `max_bytes` */
    max_lines: z.number().int().positive().max(50_000).default(50_000),
    max_bytes: z
      .number()
      .int()
      .positive()
      .max(200 * 1024 * 1024)
      .default(200 * 1024 * 1024),
    /** times a line the provider failed, expired or cancelled is resubmitted (alone) before its record fails */
    retries: z.number().int().min(0).max(20).default(3),
    /** `openai`: first wait between polls, doubling up to `max_poll_s` */
    poll_s: z.number().positive().default(10),
    max_poll_s: z.number().positive().default(300),
    /**
     * records a stage keeps in flight while this role is in batch mode: every dialogue waiting on the
     * same step goes into one batch, so this bounds a round (and the memory of its open dialogues)
     */
    max_records: z.number().int().positive().default(50_000),
    /** seconds without a new request after which what is queued is sent even if some record is still busy */
    settle_s: z.number().positive().default(30),
    /** the batch price as a fraction of the online one, for `--dry-run` and the usage's cost */
    discount: z.number().min(0).max(1).default(DEFAULT_BATCH_DISCOUNT),
  })
  .strict()
  .superRefine((batch, ctx) => {
    for (const field of ["{input}", "{output}"]) {
      if (batch.provider === "files" && !batch.command.includes(field)) {
        ctx.addIssue({
          code: "custom",
          path: ["command"],
          message: `the command must contain ${field} (e.g. '${DEFAULT_BATCH_COMMAND}')`,
        });
      }
    }
  });
export type BatchConfig = z.infer<typeof batchSchema>;

/** The command that answers one input file, for the message of a stage that waits for it. */
export function batchCommand(config: BatchConfig, input: string, output: string, model: string): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  return config.command
    .replaceAll("{input}", quote(input))
    .replaceAll("{output}", quote(output))
    .replaceAll("{model}", quote(model));
}
