// The paper's interaction simulation: the weak model answers each selected query, its code runs in the
// sandbox, and the strong model answers the execution feedback until its code is right or three
// iterations pass (stages/simulate/interaction.ts); then `feedback_rounds` rounds of simulated human
// feedback (one of ten categories), each followed by that loop again. Every result is journaled, so a
// redone record replays the same dialogue.

import { makeDialogue } from "../pipeline/dialogue.js";
import { LlmAbortedError } from "../pipeline/llm/errors.js";
import { loadPrompt } from "../pipeline/llm/prompts.js";
import { roleFingerprint } from "../pipeline/llm/provider.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import type { StageContext } from "../pipeline/stage.js";
import { DialogueRejected, outcomeOfError } from "./dialogue-kit/outcome.js";
import type { DialogueServices } from "./dialogue-kit/services.js";
import { dialogueStage } from "./dialogue-kit/stage.js";
import { type SimulateConfig, simulateConfigSchema } from "./simulate/config.js";
import { type SimulatedFeedback, simulateHumanFeedback } from "./simulate/feedback.js";
import { Interaction, type LoopEnv } from "./simulate/interaction.js";
import {
  INTERACTION_SIMULATION,
  type SimulateSummary,
  simulateSummarySchema,
  summarizeSimulate,
} from "./simulate/summary.js";

type SimulateContext = StageContext<SimulateConfig>;

/** One record's dialogue; the stage has rejected a record without a query before this runs. */
export async function simulateInteraction(
  record: PipelineRecord & { query: string },
  ctx: SimulateContext,
  services: DialogueServices,
): Promise<RecordOutcome> {
  const { config } = ctx;
  const query = record.query;
  const hint = typeof record.lang === "string" ? record.lang : undefined;
  const dialogue = new Interaction(
    [
      { role: "system", content: loadPrompt(config.system_prompt).render({}) },
      { role: "user", content: query },
    ],
    hint,
  );
  const feedbacks: (SimulatedFeedback & { round: number })[] = [];
  try {
    const env: LoopEnv = {
      strong: services.llm(config.strong_role),
      strongRole: config.strong_role,
      executor: services.executor,
      journal: services.journal.open(record.id),
      maxIterations: config.max_iterations,
      notebook: config.execution.notebook,
      signal: ctx.signal,
      interrupted: () => new LlmAbortedError(config.strong_role),
    };
    // 1. The weak model's preliminary answer, then execution feedback until the strong model is done.
    await dialogue.ask(services.llm(config.weak_role), config.weak_role, env);
    await dialogue.executionFeedbackLoop(env, "execution-feedback", config.weak_role);
    // 2. Simulated human feedback: only its `feedback` text becomes the user's turn; the strong model
    //    refines and the refinement runs like any other answer. It starts only from code that ran and
    //    was shown: after an answer the cap left unrun, the dialogue ends (validate runs that code).
    for (let round = 1; round <= config.feedback_rounds && !dialogue.unrun; round++) {
      if (ctx.signal.aborted) throw env.interrupted();
      const feedback = await simulateHumanFeedback(
        services.llm(config.reviewer_role),
        loadPrompt(config.feedback_prompt),
        { request: config.feedback_request, reminder: config.json_reminder, signal: ctx.signal },
        dialogue.messages,
      );
      feedbacks.push({ ...feedback, round });
      dialogue.models[`${config.reviewer_role} (feedback)`] = feedback.model;
      dialogue.messages.push({ role: "user", content: feedback.feedback });
      await dialogue.ask(env.strong, config.strong_role, env);
      await dialogue.executionFeedbackLoop(env, "human-feedback", config.strong_role);
    }
    if (dialogue.executions.length === 0) {
      throw new DialogueRejected(
        "no-code",
        `no answer in the dialogue held code the sandbox runs (record language: ${hint ?? "unknown"})`,
        { messages: dialogue.messages },
      );
    }
  } catch (error) {
    return outcomeOfError(error, record, ctx.signal);
  }
  return {
    out: [
      makeDialogue({
        method: INTERACTION_SIMULATION,
        sources: [record.id],
        messages: dialogue.messages,
        lang: dialogue.lang ?? hint ?? "unknown",
        meta: {
          models: dialogue.models,
          finish_reasons: dialogue.finishReasons,
          iterations: dialogue.executions.filter((e) => e.phase === "execution-feedback").length,
          feedback_rounds: feedbacks.length,
          passed: dialogue.passed,
          capped: dialogue.capped,
          // the last answer's code never ran (the cap held in the last phase): `validate` runs it
          ends_unrun: dialogue.unrun,
          executions: dialogue.executions,
          feedback: feedbacks.map(({ model: _model, ...f }) => f),
          category: feedbacks.at(-1)?.category ?? null,
          resource: record.resource ?? null,
        },
      }),
    ],
  };
}

export const simulateStage = dialogueStage<SimulateConfig, SimulateSummary>({
  name: "simulate",
  description: "weak model answers, the sandbox runs it, strong model fixes it; simulated human feedback",
  methods: [INTERACTION_SIMULATION],
  configSchema: simulateConfigSchema,
  leadRole: (config) => config.strong_role,
  fingerprint: ({ config, root }) => {
    const roles = [config.weak_role, config.strong_role, config.reviewer_role];
    return {
      roles: roles.map((role) => roleFingerprint(root.llm, role) ?? { role }),
      prompts: [config.system_prompt, config.feedback_prompt].map((name) => loadPrompt(name).text),
    };
  },
  process: simulateInteraction,
  // the usual course: an answer, its run answered, feedback, a refinement, its run answered
  plan: (config) => ({
    firstRole: config.weak_role,
    systemPrompt: config.system_prompt,
    later: [
      { role: config.strong_role, grownBy: 2 },
      { role: config.reviewer_role, grownBy: 3 },
      { role: config.strong_role, grownBy: 4 },
      { role: config.strong_role, grownBy: 6 },
    ],
    what: "as in a dialogue that passes at once (failing code adds up to 2 per phase)",
  }),
  summarize: summarizeSimulate,
  summarySchema: simulateSummarySchema,
});
