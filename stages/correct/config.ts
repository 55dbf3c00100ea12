// `stages.correct` in the config. The defaults are the paper's: GPT-4 (`strong`) writes code with
// deliberate mistakes under the error-inducing prompt for a sample of 500 filtered queries, sees the
// error, corrects it; the published dialogue carries the ordinary code-interpreter prompt instead.
import { z } from "zod";
import { dialogueRunShape, selectionShape } from "../dialogue-kit/config.js";

export const DEFAULT_CHECK_REQUEST =
  "Below are a programming task and {language} code written for it. Write a short {language} check of " +
  "that code: a few assertions that call the code's functions or classes exactly as it defines them " +
  "and compare their results with what the task requires (in JavaScript or TypeScript, use the " +
  "`assert` module). The check will run right after the code. Reply with one {language} code block " +
  "holding only the assertions.\n\nTask:\n{query}\n\nCode:\n```{language}\n{code}\n```";

export const correctConfigSchema = z
  .object({
    ...selectionShape,
    /** a seeded sample of this many records (paper: 500) */
    count: selectionShape.count.default(500),
    /** the role that writes the mistakes, the check and the corrections (paper: GPT-4) */
    role: z.string().min(1).default("strong"),
    /** the error-inducing prompt the broken code is written under */
    error_prompt: z.string().min(1).default("correct-errors"),
    /** the ordinary prompt the published dialogue carries, and the correction is written under */
    system_prompt: z.string().min(1).default("simulate-interpreter"),
    /**
     * Languages where code that runs cleanly gets a model-written check, so a logical error can show;
     * elsewhere only a compile error, a runtime error or a time-out counts as a mistake.
     */
    check_languages: z.array(z.string().min(1)).default(["python", "javascript", "typescript"]),
    /** the check's request; `{query}`, `{code}`, `{language}` */
    check_request: z.string().includes("{code}").default(DEFAULT_CHECK_REQUEST),
    /** the corrected code's run and the model's analysis of it close the dialogue */
    analyse_fixed_run: z.boolean().default(true),
    ...dialogueRunShape,
  })
  .strict();

export type CorrectConfig = z.infer<typeof correctConfigSchema>;
