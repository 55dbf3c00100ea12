// `stages.simulate` in the config. The defaults are the paper's: GPT-3.5 (`weak`) answers under the
// code-interpreter prompt, GPT-4 (`strong`) answers each execution result, at most 3 times; then GPT-4
// under the feedback prompt plays the user once and GPT-4 refines.
import { z } from "zod";
import { dialogueRunShape, selectionShape } from "../dialogue-kit/config.js";

export const DEFAULT_FEEDBACK_REQUEST =
  "Here is the conversation between the user and the assistant so far:\n\n{conversation}";

export const DEFAULT_JSON_REMINDER =
  "Your answer could not be read. Reply with only the JSON object, with the keys " +
  '"satisfied", "not_satisfied" and "feedback", and nothing else.';

export const simulateConfigSchema = z
  .object({
    ...selectionShape,
    /** the LLM role that writes the first answer (paper: GPT-3.5) */
    weak_role: z.string().min(1).default("weak"),
    /** the role that answers execution results and feedback (paper: GPT-4) */
    strong_role: z.string().min(1).default("strong"),
    /** the role that plays the user giving feedback (paper: GPT-4) */
    reviewer_role: z.string().min(1).default("strong"),
    /** the code-interpreter system prompt: a name in prompts/ or a path */
    system_prompt: z.string().min(1).default("simulate-interpreter"),
    /** the simulated human feedback prompt */
    feedback_prompt: z.string().min(1).default("simulate-feedback"),
    /** the reviewer's user message; `{conversation}` is the dialogue so far */
    feedback_request: z.string().includes("{conversation}").default(DEFAULT_FEEDBACK_REQUEST),
    /** sent once when the reviewer's answer is not the JSON the prompt asks for */
    json_reminder: z.string().min(1).default(DEFAULT_JSON_REMINDER),
    /** executions of new code per phase before the dialogue moves on (paper: 3) */
    max_iterations: z.number().int().min(1).max(10).default(3),
    /** rounds of simulated human feedback after the execution feedback loop */
    feedback_rounds: z.number().int().min(0).max(5).default(1),
    ...dialogueRunShape,
  })
  .strict();

export type SimulateConfig = z.infer<typeof simulateConfigSchema>;
