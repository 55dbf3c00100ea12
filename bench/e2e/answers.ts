// What the benchmark's LLM answers each role, so every stage does its real work: the scorer passes
// the paper's shares of queries through each filter prompt, the weak model writes Python that runs,
// the error-inducing prompt gets code that fails and its correction code that runs, the reviewer
// feedback JSON, anything else plain text. Scores come from a hash of the query, so a rerun scores
// the same queries the same way.
import { createHash } from "node:crypto";
import type { ReceivedRequest, Reply } from "../../test/support/llm-server.js";

/** Shares of queries scored 4-5 by the first and by the second complexity prompt (the paper's). */
export const PASS_FIRST = 191_122 / 287_252;
export const PASS_SECOND = 156_526 / 191_122;

const fence = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

/** A number in [0, 1) from `text`: the same text always gives the same number. */
function unit(text: string): number {
  return createHash("sha1").update(text).digest().readUInt32BE(0) / 2 ** 32;
}

function score(query: string, prompt: "first" | "second"): string {
  const pass = prompt === "first" ? PASS_FIRST : PASS_SECOND;
  const u = unit(`${prompt}\n${query}`);
  // passing queries spread over 4-5, the rest over 1-3
  const value = u < pass ? (u < pass / 2 ? 5 : 4) : 1 + Math.floor(((u - pass) / (1 - pass)) * 3);
  return `Score: ${value}\n\nThe query is rated ${value} for the number of steps it needs.`;
}

/** The small program every answer builds on; `n` varies with the query so outputs differ (and are
 * never 0, which doubled would print the same). */
const program = (n: number) => `total = sum(range(${n + 2}))\nprint(total)`;

export function benchAnswer(request: ReceivedRequest): Reply {
  const messages = request.body.messages;
  const first = messages[0]!.content;
  const last = messages.at(-1)!.content;
  const n = last.length % 97;
  if (last.includes("Rate the following code queries")) {
    const query = /Query: \[([\s\S]*?)\]\s*\n/.exec(last)?.[1] ?? last;
    return score(query, last.includes("Moderately Difficult") ? "second" : "first");
  }
  if (first.startsWith("You are a user who gives feedback")) {
    return '{"satisfied": "It runs and prints the total.", "not_satisfied": "The loop has no comment.", "feedback": "Please comment the sum."}';
  }
  if (first.includes("MUST contain at least one of the following types of errors")) {
    // a missing parenthesis: a real syntax error, not labelled as deliberate
    return `I will add the numbers up.\n${fence(`total = sum(range(${n})\nprint(total)`)}`;
  }
  if (request.body.model === "bench-weak") return `I will compute it.\n${fence(program(n))}`;
  if (last.startsWith("Execution result")) {
    if (/Error|Traceback/.test(last)) return `The parenthesis was not closed. Fixed:\n${fence(program(n))}`;
    // naming what it printed, so the answers to two results differ (validate's repeated-turn gate)
    const printed = last.replace(/^Execution result:\s*/, "").trim();
    return `The code printed ${printed}, the expected total, so the task is done.`;
  }
  if (first.startsWith("You are an AI code interpreter")) {
    return `Commented:\n${fence("# add the numbers up\nprint(total * 2)")}`;
  }
  return "This solution walks the input once, keeping what it has seen in a table, so it runs in linear time.";
}
