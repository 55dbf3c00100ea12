// The paper's code correction ("we first prompt GPT-4 to deliberately generate erroneous code
// snippets; the model then uses the error messages ... as clues for correction"), 500 dialogues. The
// strong model writes code under the error-inducing prompt; a real failure (an error, a time-out, or a
// failing check of its own) goes back under the ordinary prompt to be corrected, kept only if it then
// runs clean. The dialogue reads as a genuine debugging session; one that gives the game away is dropped.
import type { LanguageName } from "../pipeline/code/index.js";
import { makeDialogue } from "../pipeline/dialogue.js";
import { LlmAbortedError } from "../pipeline/llm/errors.js";
import { loadPrompt } from "../pipeline/llm/prompts.js";
import { roleFingerprint } from "../pipeline/llm/provider.js";
import type { ChatMessage } from "../pipeline/llm/types.js";
import type { PipelineRecord, RecordOutcome } from "../pipeline/record.js";
import type { StageContext } from "../pipeline/stage.js";
import { checkable, checkMessages, withCheck, writeCheck } from "./correct/check.js";
import { type CorrectConfig, correctConfigSchema } from "./correct/config.js";
import { type ErrorType, errorTypeOf } from "./correct/error-type.js";
import { givesAway } from "./correct/gives-away.js";
import {
  CODE_CORRECTION,
  type CorrectSummary,
  correctSummarySchema,
  summarizeCorrect,
} from "./correct/summary.js";
import { codeOfAnswer } from "./dialogue-kit/code.js";
import type { Program } from "./dialogue-kit/executor.js";
import { errorLine, type JournaledRun, runMeta } from "./dialogue-kit/journal.js";
import { DialogueRejected, outcomeOfError } from "./dialogue-kit/outcome.js";
import { selectedLanguage } from "./dialogue-kit/sample.js";
import type { DialogueServices } from "./dialogue-kit/services.js";
import { dialogueStage } from "./dialogue-kit/stage.js";

type CorrectContext = StageContext<CorrectConfig>;

/** One record's dialogue; the stage has rejected a record without a query before this runs. */
export async function correctCode(
  record: PipelineRecord & { query: string },
  ctx: CorrectContext,
  services: DialogueServices,
): Promise<RecordOutcome> {
  const { config } = ctx;
  const query = record.query;
  const strong = services.llm(config.role);
  const signal = ctx.signal;
  const interrupted = () => new LlmAbortedError(config.role);
  const ask = async (messages: ChatMessage[]) => {
    if (signal.aborted) throw interrupted();
    return strong.chat(messages, { signal });
  };
  const run = async (program: Program) => {
    if (signal.aborted) throw interrupted();
    return services.executor.run(journal, program);
  };
  const notebook = config.execution.notebook;
  const journal = services.journal.open(record.id);
  const hint = selectedLanguage(record, config);
  try {
    // 1. Code written to fail, under the error-inducing prompt.
    const asked: ChatMessage[] = [
      { role: "system", content: loadPrompt(config.error_prompt).render({}) },
      { role: "user", content: query },
    ];
    const broken = await ask(asked);
    const code = codeOfAnswer(broken.content, hint);
    if (!code)
      throw new DialogueRejected(
        "no-code",
        "the answer under the error-inducing prompt holds no code the sandbox runs",
      );
    refuseGiveAway(broken.content, "the answer with the mistake", true);
    const lang: LanguageName = code.lang;
    const brokenRun = await run({ code: code.code, lang, context: [...asked, broken.content] });

    // 2. A mistake only if it really fails; clean code needs its check to fail.
    let shown = brokenRun;
    let check: string | undefined;
    if (brokenRun.status === "success") {
      if (!checkable(lang, config.check_languages)) {
        throw new DialogueRejected(
          "mistake-runs",
          `the ${lang} code meant to be wrong ran cleanly (no check in ${lang})`,
        );
      }
      check = await writeCheck(
        strong,
        checkMessages(config.check_request, query, code.code, lang),
        lang,
        signal,
      );
      if (!check)
        throw new DialogueRejected(
          "mistake-runs",
          "the code meant to be wrong ran cleanly, and the check had no code",
        );
      shown = await run(withCheck(code.code, check, lang, notebook, ["check", code.code]));
      if (shown.status === "success") {
        throw new DialogueRejected(
          "mistake-runs",
          "the code meant to be wrong ran cleanly and passed its own check",
        );
      }
    }
    const errorType: ErrorType = errorTypeOf(shown, check !== undefined);

    // 3. The correction, under the ordinary prompt: from here on the dialogue is what gets published.
    const messages: ChatMessage[] = [
      { role: "system", content: loadPrompt(config.system_prompt).render({}) },
      { role: "user", content: query },
      { role: "assistant", content: broken.content },
      { role: "user", content: shown.feedback },
    ];
    const fixed = await ask([...messages]);
    messages.push({ role: "assistant", content: fixed.content });
    // why each published assistant turn ended, by index in `messages`: validate tags a cut one
    const finishReasons: Record<string, string | null> = {
      "2": broken.finishReason,
      "4": fixed.finishReason,
    };
    refuseGiveAway(fixed.content, "the correction");
    const fix = codeOfAnswer(fixed.content, lang);
    if (!fix) throw new DialogueRejected("fix-has-no-code", "the correction holds no code the sandbox runs");

    // 4. Kept only if the correction runs cleanly and passes the check the mistake failed.
    // The session holds the mistake only if it ran cleanly; one that failed or hung is not replayed.
    const previous = fix.lang === "python" && notebook && brokenRun.status === "success" ? [code.code] : [];
    const fixedRun = await run({ code: fix.code, lang: fix.lang, previous, context: [...messages] });
    if (fixedRun.status !== "success") {
      throw new DialogueRejected(
        "fix-fails",
        `the corrected code did not run cleanly (${fixedRun.status}): ${errorLine(fixedRun)}`,
      );
    }
    let checkRun: JournaledRun | undefined;
    if (check) {
      const program = withCheck(fix.code, check, fix.lang, notebook, ["check", fix.code, previous]);
      if (program.previous) program.previous = [...previous, ...program.previous];
      checkRun = await run(program);
      if (checkRun.status !== "success") {
        throw new DialogueRejected(
          "fix-fails-check",
          `the corrected code failed the check (${checkRun.status}): ${errorLine(checkRun)}`,
        );
      }
    }
    if (config.analyse_fixed_run) {
      messages.push({ role: "user", content: fixedRun.feedback });
      const analysis = await ask([...messages]);
      if (analysis.content.trim() === "") {
        throw new DialogueRejected("empty-answer", "the analysis of the corrected run is empty");
      }
      refuseGiveAway(analysis.content, "the analysis of the corrected run");
      messages.push({ role: "assistant", content: analysis.content });
      finishReasons["6"] = analysis.finishReason;
    }
    return {
      out: [
        makeDialogue({
          method: CODE_CORRECTION,
          sources: [record.id],
          messages,
          lang: fix.lang,
          meta: {
            model: fixed.model,
            finish_reasons: finishReasons,
            error_type: errorType,
            mistake: { ...runMeta(brokenRun), ...(check ? { check: runMeta(shown) } : {}) },
            fixed: { ...runMeta(fixedRun), ...(checkRun ? { check: runMeta(checkRun) } : {}) },
            checked: check !== undefined,
            resource: record.resource ?? null,
          },
        }),
      ],
    };
  } catch (error) {
    return outcomeOfError(error, record, signal);
  }
}

/** Drops the record when `text` lets on that the mistake was deliberate (stages/correct/gives-away.ts). */
function refuseGiveAway(text: string, what: string, mistake = false): void {
  const found = givesAway(text, mistake);
  if (found)
    throw new DialogueRejected(
      "mentions-mistake",
      `${what} gives away that the mistake is deliberate: ${found}`,
    );
}

export const correctStage = dialogueStage<CorrectConfig, CorrectSummary>({
  name: "correct",
  description: "deliberately broken code, its error, and the fix",
  methods: [CODE_CORRECTION],
  configSchema: correctConfigSchema,
  leadRole: (config) => config.role,
  fingerprint: ({ config, root }) => ({
    role: roleFingerprint(root.llm, config.role),
    prompts: [config.error_prompt, config.system_prompt].map((name) => loadPrompt(name).text),
  }),
  process: correctCode,
  // the mistake, its correction, the analysis of the corrected run (a check adds one for clean code)
  plan: (config) => ({
    firstRole: config.role,
    systemPrompt: config.error_prompt,
    later: [
      { role: config.role, grownBy: 2 },
      { role: config.role, grownBy: 4 },
    ],
    what: "(a logical error adds a check request)",
  }),
  summarize: summarizeCorrect,
  summarySchema: correctSummarySchema,
});
