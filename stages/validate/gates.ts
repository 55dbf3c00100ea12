// Quality gates: what real models do that makes a dialogue poor training data even when its final
// code runs. Each rule tags the dialogue (`meta.validation.gates`) and, when listed in
// `stages.validate.gates.drop`, drops it with the rule as the reason. Every rule reads the dialogue
// as published and what validate's own runs of its blocks showed, never what a stage claims.
import { extractCodeBlocks, isProgrammingLanguage, type LanguageName } from "../../pipeline/code/index.js";
import type { Dialogue } from "../../pipeline/dialogue.js";
import { askedLanguage, asksForCode, servesLanguage } from "./asks.js";
import type { GateRule, GatesConfig } from "./config.js";
import { agrees, statedOutputs } from "./stated-output.js";
import type { BlockValidation } from "./validate-dialogue.js";

export interface GateTag {
  rule: GateRule;
  /** index in `messages` of the turn the rule points at */
  message: number;
  detail: string;
}

/** What validate's run of one block showed, beyond its tag: only the gates need it. */
export interface BlockRun {
  block: BlockValidation;
  stdout: string;
}

/** The execution-result turn in the released dataset's style (simulate and correct write it so). */
export const isExecutionResult = (text: string) => /^\s*Execution result\s*:/i.test(text);

export function checkGates(
  dialogue: Pick<Dialogue, "messages" | "meta">,
  runs: readonly BlockRun[],
  config: GatesConfig,
): GateTag[] {
  const tags: GateTag[] = [];
  const { messages } = dialogue;
  const tag = (rule: GateRule, message: number, detail: string) => tags.push({ rule, message, detail });

  // silent-failure: the exception is the dialogue's last answer, left unrun on purpose; the final
  // outcome (`drop`) speaks for it
  for (const { block } of runs) {
    if (block.outcome !== "failed" && block.outcome !== "timeout") continue;
    const next = messages[block.message + 1];
    if (next && !(next.role === "user" && isExecutionResult(next.content))) {
      tag(
        "silent-failure",
        block.message,
        `block ${block.block} ${block.outcome === "timeout" ? "times out" : `fails (${block.error ?? "error"})`} and the next turn is not its execution result`,
      );
    }
  }

  // stated-output: what an answer says it prints, against what its blocks printed here
  const byMessage = new Map<number, BlockRun[]>();
  for (const run of runs)
    byMessage.set(run.block.message, [...(byMessage.get(run.block.message) ?? []), run]);
  for (const [m, ran] of byMessage) {
    if (!ran.every((r) => r.block.outcome === "passed")) continue;
    const printed = ran.map((r) => r.stdout).join("");
    const wrong = statedOutputs(messages[m]!.content).find((s) => !agrees(s, printed));
    if (wrong) {
      tag(
        "stated-output",
        m,
        `says it prints ${JSON.stringify(cut(wrong.text))}, the sandbox printed ${JSON.stringify(cut(printed))}`,
      );
    }
  }

  const requests = messages.flatMap((msg, i) =>
    msg.role === "user" && !isExecutionResult(msg.content) ? [i] : [],
  );
  const hasCode = (i: number) =>
    extractCodeBlocks(messages[i]!.content).some((b) => b.fenced && b.code.trim() !== "");

  const lastRequest = requests.at(-1);
  if (lastRequest !== undefined && asksForCode(messages[lastRequest]!.content)) {
    const answers = messages.flatMap((msg, i) => (i > lastRequest && msg.role === "assistant" ? [i] : []));
    if (answers.length > 0 && !answers.some(hasCode)) {
      tag("no-code-answer", answers.at(-1)!, "the request asks for code and the answer to it has none");
    }
  }

  // the query (the first request) names the language
  const first = requests[0];
  const asked = first === undefined ? undefined : askedLanguage(messages[first]!.content);
  if (asked) {
    for (const [i, msg] of messages.entries()) {
      if (msg.role !== "assistant") continue;
      const other = extractCodeBlocks(msg.content).find((b) => b.fenced && isOtherProgram(b.lang, asked));
      if (other) {
        tag("wrong-language", i, `the query asks for ${asked} and the answer has a ${other.lang} block`);
        break;
      }
    }
  }

  const finish = (dialogue.meta.finish_reasons ?? {}) as Record<string, unknown>;
  for (const [i, msg] of messages.entries()) {
    if (msg.role !== "assistant") continue;
    if (msg.content.trim() === "") tag("truncated", i, "the answer is empty");
    else if (finish[String(i)] === "length") tag("truncated", i, "the answer was cut by max_tokens");
    else if (extractCodeBlocks(msg.content).some((b) => b.fenced && !b.complete))
      tag("truncated", i, "a code fence never closes");
  }

  for (const [i, msg] of messages.entries()) {
    if (
      msg.role === "user" &&
      isExecutionResult(msg.content) &&
      msg.content.length > config.max_result_chars
    ) {
      tag(
        "long-result",
        i,
        `an execution result of ${msg.content.length} characters (gates.max_result_chars: ${config.max_result_chars})`,
      );
    }
  }

  const seen = new Map<string, number>();
  for (const [i, msg] of messages.entries()) {
    if (msg.role !== "assistant") continue;
    const key = msg.content.trim();
    const earlier = seen.get(key);
    if (earlier !== undefined) tag("repeated-turn", i, `the same answer as message ${earlier}`);
    else seen.set(key, i);
  }

  for (const { block } of runs) {
    if (block.stopped) {
      tag("sandbox-stopped", block.message, `block ${block.block}: the sandbox ${STOPPED[block.stopped]}`);
    }
  }
  return tags;
}

const STOPPED: Record<NonNullable<BlockValidation["stopped"]>, string> = {
  network: "refused its network access",
  "write-denied": "denied a write outside its work dir",
  processes: "refused a process past its process limit",
  memory: "killed it at its memory limit",
  output: "killed it for too much output",
};

/** A program block in another language than the one asked for (shell, SQL and markup are side dishes). */
function isOtherProgram(lang: LanguageName | undefined, asked: LanguageName): boolean {
  if (!lang || !isProgrammingLanguage(lang) || lang === "shell" || lang === "sql") return false;
  return !servesLanguage(asked, lang);
}

const cut = (s: string) => (s.length > 80 ? `${s.slice(0, 80)}...` : s).trim();
