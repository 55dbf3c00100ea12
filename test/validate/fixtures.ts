// Hand-written dialogues for the validate and export tests, in the shape every dialogue stage emits,
// and a stand-in dialogue stage that emits them under one of the dialogue stages' names.
import { z } from "zod";
import { type DialogueMessage, type DialogueMethod, makeDialogue } from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { CODE_CORRECTION } from "../../stages/correct/summary.js";
import { LEETCODE_METHODS } from "../../stages/leetcode/summary.js";
import { SINGLE_TURN_PACKING } from "../../stages/pack/summary.js";
import { INTERACTION_SIMULATION } from "../../stages/simulate/summary.js";

/** The paper's five methods, as their stages declare them. */
export const PAPER_METHODS: readonly DialogueMethod[] = [
  SINGLE_TURN_PACKING,
  INTERACTION_SIMULATION,
  CODE_CORRECTION,
  ...LEETCODE_METHODS,
];

/** A paper method by its name, or the declaration given. */
export function declared(method: string | DialogueMethod): DialogueMethod {
  if (typeof method !== "string") return method;
  const found = PAPER_METHODS.find((m) => m.name === method);
  if (!found) throw new Error(`no paper method ${method}`);
  return found;
}

export const fence = (lang: string, code: string) => `\`\`\`${lang}\n${code}\n\`\`\``;

export function turns(...pairs: [string, string][]): DialogueMessage[] {
  return pairs.flatMap(([user, assistant]) => [
    { role: "user" as const, content: user },
    { role: "assistant" as const, content: assistant },
  ]);
}

export function dialogue(
  method: string | DialogueMethod,
  sources: string[],
  lang: string,
  messages: DialogueMessage[],
): PipelineRecord {
  return makeDialogue({ method: declared(method), sources, lang, messages, meta: { made_by: "test" } });
}

/** One dialogue per final-code outcome, two methods, three languages. */
export function sampleDialogues(): PipelineRecord[] {
  return [
    dialogue("single-turn-packing", ["s:1", "s:2"], "python", [
      ...turns(
        [
          "Write a function that squares a number.",
          `Here it is:\n${fence("python", "def square(x):\n    return x * x")}`,
        ],
        ["Now print the squares of 1..3.", fence("python", "print([square(i) for i in range(1, 4)])")],
      ),
    ]),
    dialogue("single-turn-packing", ["s:3"], "python", [
      ...turns(["Divide by zero, please.", fence("python", "print(1 / 0)")]),
    ]),
    dialogue("interaction-simulation", ["s:4"], "python", [
      ...turns(["Spin forever.", fence("python", "while True:\n    pass")]),
    ]),
    dialogue("interaction-simulation", ["s:5"], "python", [
      ...turns([
        "Plot with a package the sandbox lacks.",
        fence("python", "import nonexistentpkg\nprint(nonexistentpkg.plot())"),
      ]),
    ]),
    dialogue("interaction-simulation", ["s:6"], "cpp", [
      ...turns([
        "Add two ints in C++.",
        fence("cpp", "int add(int a, int b) {\n    vector<int> v{a, b};\n    return v[0] + v[1];\n}"),
      ]),
    ]),
    dialogue("single-turn-packing", ["s:7"], "unknown", [
      ...turns([
        "Explain recursion without code.",
        "Recursion is a function calling itself on a smaller input.",
      ]),
    ]),
  ];
}

/** A stand-in for a dialogue stage (pack by default) that emits the given dialogues. */
export function dialogueSource(
  name: string,
  records: () => PipelineRecord[],
  /** the dialogue methods the stage it stands in for declares */
  methods?: readonly (string | DialogueMethod)[],
): Stage<unknown> {
  return defineStage({
    name,
    description: `test dialogues standing in for ${name}`,
    ...(methods ? { methods: methods.map(declared) } : {}),
    upstream: [],
    kind: "global",
    configSchema: z.object({}).strict(),
    async run(_ctx, emit) {
      for (const record of records()) await emit.out(record);
    },
  }) as Stage<unknown>;
}
