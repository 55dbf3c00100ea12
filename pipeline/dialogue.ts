// The dialogue record every dialogue stage emits and every later stage reads (validation, the release,
// the report), and the declaration of a dialogue method, which the stage that makes it lists in its
// `methods` (pipeline/registry.ts). `messages` is exactly what m-a-p/Code-Feedback publishes (roles
// `user` and `assistant`, plus `system` only where a method has one); the rest says how the dialogue
// was made. The release keeps `{id, messages}` only.
import { createHash } from "node:crypto";
import { z } from "zod";
import type { PipelineRecord } from "./record.js";

/** A dialogue method as the stage that makes it declares it; validate, export, the card and the report read these. */
export interface DialogueMethod<N extends string = string> {
  /** the `method` of its dialogues */
  readonly name: N;
  /** its dialogues' ids are `<prefix>-<hash>` */
  readonly prefix: string;
  /** the paper's table (dialogues, turns per dialogue); none for a method the paper does not have */
  readonly paper?: { readonly dialogues: number; readonly turnsPerDialogue: number } | undefined;
  /** how the dataset card names it among the ways dialogues are made (methods of one stage may share it) */
  readonly card: string;
  /** a dataset's dialogues taken as found and audited, not made here: where they came from (repo or path) */
  readonly audited?: { readonly where: string } | undefined;
}

export const messageSchema = z
  .object({
    role: z.enum(["system", "user", "assistant"]),
    content: z.string(),
  })
  .strict();
export type DialogueMessage = z.infer<typeof messageSchema>;

export const dialogueSchema = z
  .object({
    /** stable across reruns: the method and the sources it was built from (see `dialogueId`) */
    id: z.string().min(1),
    messages: z.array(messageSchema).min(2),
    /** a declared method's name (`parseDialogue` checks it against the run's methods where given) */
    method: z.string().min(1),
    /** ids of the records it was built from (filtered records, or TACO rows for leetcode) */
    sources: z.array(z.string().min(1)).min(1),
    /** canonical language of the dialogue's code (pipeline/code `LanguageName`), or `unknown` */
    lang: z.string().min(1),
    /** what the method knows: neighbour distances, models, execution results, feedback category... */
    meta: z.record(z.string(), z.unknown()),
  })
  .strict()
  .superRefine((d, ctx) => {
    for (const problem of dialogueProblems(d.messages)) ctx.addIssue({ code: "custom", message: problem });
  });
export type Dialogue = z.infer<typeof dialogueSchema>;

/**
 * What is wrong with a message list as a Code-Feedback dialogue: at most one system message, first;
 * then turns that alternate user / assistant, starting with a user and ending with an assistant;
 * no empty content. An empty list means it is well formed.
 */
export function dialogueProblems(messages: readonly DialogueMessage[]): string[] {
  const problems: string[] = [];
  let start = 0;
  if (messages[0]?.role === "system") start = 1;
  const body = messages.slice(start);
  if (body.length === 0) problems.push("no user and assistant messages");
  for (const [i, m] of messages.entries()) {
    if (m.role === "system" && i !== 0) problems.push(`message ${i}: a system message may only come first`);
    if (m.content.trim() === "") problems.push(`message ${i} (${m.role}) is empty`);
  }
  for (const [i, m] of body.entries()) {
    const want = i % 2 === 0 ? "user" : "assistant";
    if (m.role !== "system" && m.role !== want) {
      problems.push(`message ${i + start}: expected ${want}, found ${m.role}`);
      break;
    }
  }
  if (body.length > 0 && body[body.length - 1]!.role !== "assistant") {
    problems.push("the dialogue must end with an assistant message");
  }
  return problems;
}

/**
 * A dialogue's id: `<method prefix>-<hash of its sources>`. Sources are hashed in the order given, since
 * the order of the turns is part of the dialogue; the same sources give the same id on every rerun.
 */
export function dialogueId(method: DialogueMethod, sources: readonly string[], variant = ""): string {
  const hash = createHash("sha256")
    .update(`${method.name}\n${variant}\n${sources.join("\n")}`)
    .digest("hex")
    .slice(0, 16);
  return `${method.prefix}-${hash}`;
}

/** Builds a dialogue record and checks it; throws (a bug in the stage) if it is not well formed. */
export function makeDialogue(fields: {
  method: DialogueMethod;
  sources: readonly string[];
  messages: readonly DialogueMessage[];
  lang: string;
  meta?: Record<string, unknown>;
  /** distinguishes two dialogues one method builds from the same sources (e.g. a follow-up kind) */
  variant?: string;
  id?: string;
}): Dialogue & PipelineRecord {
  const dialogue: Dialogue = {
    id: fields.id ?? dialogueId(fields.method, fields.sources, fields.variant),
    messages: fields.messages.map((m) => ({ role: m.role, content: m.content })),
    method: fields.method.name,
    sources: [...fields.sources],
    lang: fields.lang,
    meta: fields.meta ?? {},
  };
  const problems = dialogueProblems(dialogue.messages);
  if (problems.length > 0)
    throw new Error(`malformed ${dialogue.method} dialogue ${dialogue.id}: ${problems.join("; ")}`);
  return dialogue;
}

/** Reads a record as a dialogue, of one of `methods` where given; the error message names what is wrong. */
export function parseDialogue(
  record: unknown,
  methods?: readonly DialogueMethod[],
): { ok: true; dialogue: Dialogue } | { ok: false; error: string } {
  const parsed = dialogueSchema.safeParse(record);
  if (!parsed.success) {
    const error = parsed.error.issues.map((i) => `${i.path.join(".") || "record"}: ${i.message}`).join("; ");
    return { ok: false, error };
  }
  const { method } = parsed.data;
  if (methods && !methods.some((m) => m.name === method)) {
    const declared = methods.map((m) => m.name).join(", ") || "none";
    return { ok: false, error: `method: no stage of this run declares ${method} (declared: ${declared})` };
  }
  return { ok: true, dialogue: parsed.data };
}

/** Turns of a dialogue: user messages (each answered by the assistant). */
export function turnCount(dialogue: Pick<Dialogue, "messages">): number {
  return dialogue.messages.filter((m) => m.role === "user").length;
}

/**
 * The Code-Feedback line of a dialogue: `{id, messages}` and nothing else, with the integer id export
 * gives it. m-a-p/Code-Feedback has only user and assistant turns, so a leading system message is left
 * out unless `keepSystem` says otherwise.
 */
export function codeFeedbackLine(
  dialogue: Pick<Dialogue, "messages">,
  id: number,
  options: { keepSystem?: boolean } = {},
): { id: number; messages: DialogueMessage[] } {
  const messages = dialogue.messages.filter(
    (m, i) => options.keepSystem || !(i === 0 && m.role === "system"),
  );
  return { id, messages: messages.map((m) => ({ role: m.role, content: m.content })) };
}

/** One method's dialogues as DialogueTally counts them, as a stage summary keeps them. */
export const methodTallySchema = z.object({
  dialogues: z.number(),
  turns: z.number(),
  turns_per_dialogue: z.number(),
  by_lang: z.record(z.string(), z.number()),
  paper: z.object({ dialogues: z.number(), turns_per_dialogue: z.number() }).optional(),
});
export type MethodTally = z.infer<typeof methodTallySchema>;

/** DialogueTally's result: method -> its tally (only methods with dialogues). */
export const dialogueTallySchema = z.record(z.string(), methodTallySchema);

/** The keys of a summary that spreads a DialogueTally of the given methods, for its schema. */
export function methodTallyKeys<N extends string>(
  methods: readonly DialogueMethod<N>[],
): { [K in N]: z.ZodOptional<typeof methodTallySchema> } {
  return Object.fromEntries(methods.map((m) => [m.name, methodTallySchema.optional()])) as never;
}

/** The tallies a summary spreads (methodTallyKeys), by method: what a dialogue stage made. */
export function talliesOf(summary: object, methods: readonly DialogueMethod[]): Record<string, MethodTally> {
  const all = summary as Record<string, MethodTally | undefined>;
  return Object.fromEntries(methods.flatMap((m) => (all[m.name] ? [[m.name, all[m.name]!]] : [])));
}

/** Per-method counts of a set of dialogues next to the paper's, for stage summaries and the report. */
export class DialogueTally {
  private readonly byMethod = new Map<
    string,
    { dialogues: number; turns: number; byLang: Map<string, number> }
  >();

  /** `methods`: the declared methods, in the order the result lists them (any other comes last) */
  constructor(private readonly methods: readonly DialogueMethod[]) {}

  /** The tally of the dialogues a stage wrote itself (makeDialogue's records), taken as they are. */
  static async of(
    methods: readonly DialogueMethod[],
    records: AsyncIterable<PipelineRecord>,
  ): Promise<DialogueTally> {
    const tally = new DialogueTally(methods);
    for await (const record of records) tally.add(record as unknown as Dialogue);
    return tally;
  }

  add(dialogue: Pick<Dialogue, "method" | "messages" | "lang">): void {
    if (!this.byMethod.has(dialogue.method))
      this.byMethod.set(dialogue.method, { dialogues: 0, turns: 0, byLang: new Map() });
    const entry = this.byMethod.get(dialogue.method)!;
    entry.dialogues++;
    entry.turns += turnCount(dialogue);
    entry.byLang.set(dialogue.lang, (entry.byLang.get(dialogue.lang) ?? 0) + 1);
  }

  result(): Record<string, MethodTally> {
    const out: ReturnType<DialogueTally["result"]> = {};
    for (const method of new Set([...this.methods.map((m) => m.name), ...this.byMethod.keys()])) {
      const entry = this.byMethod.get(method);
      if (!entry) continue;
      const paper = this.methods.find((m) => m.name === method)?.paper;
      out[method] = {
        dialogues: entry.dialogues,
        turns: entry.turns,
        turns_per_dialogue: entry.dialogues === 0 ? 0 : round2(entry.turns / entry.dialogues),
        by_lang: Object.fromEntries([...entry.byLang].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))),
        ...(paper && { paper: { dialogues: paper.dialogues, turns_per_dialogue: paper.turnsPerDialogue } }),
      };
    }
    return out;
  }

  /** Lines for the end-of-stage log: dialogues, turns per dialogue, the paper's figure. */
  describe(): string[] {
    return Object.entries(this.result()).map(([method, r]) => {
      const ours =
        `${method}: ${r.dialogues.toLocaleString("en-US")} dialogues, ${r.turns.toLocaleString("en-US")} turns, ` +
        `${r.turns_per_dialogue} turns per dialogue`;
      if (!r.paper) return ours;
      const deviation = paperDeviation(r.turns_per_dialogue, r.paper.turns_per_dialogue);
      const mark =
        Math.abs(deviation) > PAPER_DEVIATION_LIMIT ? `; ${signedPercent(deviation)}, over the 20% mark` : "";
      return (
        `${ours} (paper: ${r.paper.dialogues.toLocaleString("en-US")} dialogues, ` +
        `${r.paper.turns_per_dialogue} turns per dialogue${mark})`
      );
    });
  }
}

/** A figure further than this (relative) from the paper's is marked as a deviation. */
export const PAPER_DEVIATION_LIMIT = 0.2;

/** `(ours - paper) / paper`, rounded to a hundredth. */
export function paperDeviation(ours: number, paper: number): number {
  return paper === 0 ? 0 : round2((ours - paper) / paper);
}

/** paperShape's result, as export's summary keeps it. */
export const paperShapeSchema = z.object({
  reproduces: z.boolean(),
  verdict: z.string(),
  methods: z.array(
    z.object({
      method: z.string(),
      /** `ran`; `disabled` (its stage switched off); `none` (its stage ran and kept none) */
      state: z.enum(["ran", "disabled", "none"]),
      dialogues: z.number(),
      turns_per_dialogue: z.number(),
      /** the paper's figures; none for a method the paper does not have */
      paper_dialogues: z.number().optional(),
      paper_turns_per_dialogue: z.number().optional(),
      /** relative to the paper's turns per dialogue */
      deviation: z.number(),
      /** over PAPER_DEVIATION_LIMIT */
      deviates: z.boolean(),
    }),
  ),
});
/** One method's turns per dialogue beside the paper's, or why there is nothing to compare. */
export type MethodShape = z.infer<typeof paperShapeSchema>["methods"][number];

/**
 * Whether a run has the released dataset's per-method shape: every paper method made dialogues, each
 * with turns per dialogue within PAPER_DEVIATION_LIMIT of the paper's table. Dialogue counts are left
 * out on purpose: they follow the size of the input and `count` settings, not the method. A method
 * the paper does not have is listed, and left out of the verdict.
 */
export function paperShape(
  byMethod: Readonly<Record<string, { dialogues: number; turns: number } | undefined>>,
  declared: readonly DialogueMethod[],
  disabledMethods: readonly DialogueMethod[] = [],
): { reproduces: boolean; verdict: string; methods: MethodShape[] } {
  const methods = declared.map(({ name: method, paper }): MethodShape => {
    const figures = paper && {
      paper_dialogues: paper.dialogues,
      paper_turns_per_dialogue: paper.turnsPerDialogue,
    };
    const t = byMethod[method];
    const disabled = disabledMethods.some((m) => m.name === method);
    const made = disabled || !t || t.dialogues === 0 ? undefined : t;
    const tpd = made ? round2(made.turns / made.dialogues) : 0;
    const deviation = made && paper ? paperDeviation(tpd, paper.turnsPerDialogue) : 0;
    return {
      method,
      state: disabled ? "disabled" : made ? "ran" : "none",
      dialogues: made?.dialogues ?? 0,
      turns_per_dialogue: tpd,
      ...figures,
      deviation,
      deviates: Math.abs(deviation) > PAPER_DEVIATION_LIMIT,
    };
  });
  const inPaper = methods.filter((m) => m.paper_turns_per_dialogue !== undefined);
  const off = inPaper.filter((m) => m.state !== "ran");
  const deviating = inPaper.filter((m) => m.deviates);
  const reproduces = off.length === 0 && deviating.length === 0;
  const limit = `${PAPER_DEVIATION_LIMIT * 100}%`;
  const verdict = reproduces
    ? `reproduces the released dataset's per-method shape: every method's turns per dialogue is within ${limit} of the paper's`
    : `does not reproduce the released dataset's per-method shape: ${[
        ...deviating.map(
          (m) =>
            `${m.method} has ${m.turns_per_dialogue} turns per dialogue (paper: ${m.paper_turns_per_dialogue}, ${signedPercent(m.deviation)})`,
        ),
        ...off.map(
          (m) => `${m.method} ${m.state === "disabled" ? "not run (disabled)" : "made no dialogue"}`,
        ),
      ].join("; ")}`;
  return { reproduces, verdict, methods };
}

/** `+60%`, `-5%`. */
export function signedPercent(deviation: number): string {
  const p = Math.round(deviation * 100);
  return `${p > 0 ? "+" : ""}${p}%`;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
