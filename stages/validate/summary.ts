// What validate says at the end, and what the report draws from its manifest: the outcome of every
// dialogue's final code per method and language, every block's outcome per language, why blocks could
// not run, and the dialogues kept (per method and language, next to the paper's table).
import { z } from "zod";
import {
  type Dialogue,
  type DialogueMethod,
  DialogueTally,
  dialogueTallySchema,
} from "../../pipeline/dialogue.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { BLOCK_OUTCOMES, DIALOGUE_OUTCOMES } from "./config.js";
import type { GateTag } from "./gates.js";
import type { DialogueValidation } from "./validate-dialogue.js";

/** A number for each of `keys`, in their order (the order the summary writes them). */
function numbers<const K extends string>(keys: readonly K[]): Record<K, z.ZodNumber> {
  return Object.fromEntries(keys.map((k) => [k, z.number()])) as Record<K, z.ZodNumber>;
}

const counts = z.record(z.string(), z.number());

export const validateSummarySchema = z.object({
  dialogues: z.object(numbers(["validated", "kept", "dropped", "malformed"])),
  /** final-code outcome of every validated dialogue, kept or dropped, by method then language */
  by_method: z.record(
    z.string(),
    z.record(z.string(), z.object({ ...numbers(DIALOGUE_OUTCOMES), ...numbers(["kept", "dropped"]) })),
  ),
  /** every block's outcome by the block's own language */
  blocks_by_language: z.record(z.string(), z.object(numbers(BLOCK_OUTCOMES))),
  /** blocks that could not run, by reason */
  not_runnable_reasons: counts,
  /** dropped dialogues by the outcome or the gate that dropped them */
  dropped_by: counts,
  /** dialogues each quality gate tagged, kept or dropped, by rule then method */
  gates: z.record(z.string(), counts),
  /** the kept dialogues: dialogues, turns and languages per method, next to the paper's */
  kept: dialogueTallySchema,
});
export type ValidateSummary = z.infer<typeof validateSummarySchema>;

/** The validated dialogue of an output record or of a drop's reject. */
function validated(
  record: unknown,
): (Dialogue & { meta: { validation?: DialogueValidation & { gates?: GateTag[] } } }) | undefined {
  const r = record as { messages?: unknown; meta?: { validation?: unknown } } | undefined;
  return r && Array.isArray(r.messages) && r.meta?.validation ? (r as never) : undefined;
}

export async function summarizeValidation(
  methods: readonly DialogueMethod[],
  outputs: AsyncIterable<PipelineRecord>,
  rejects: AsyncIterable<PipelineRecord>,
): Promise<ValidateSummary> {
  const summary: ValidateSummary = {
    dialogues: { validated: 0, kept: 0, dropped: 0, malformed: 0 },
    by_method: {},
    blocks_by_language: {},
    not_runnable_reasons: {},
    dropped_by: {},
    gates: {},
    kept: {},
  };
  const tally = new DialogueTally(methods);
  const count = (dialogue: NonNullable<ReturnType<typeof validated>>, kept: boolean) => {
    const v = dialogue.meta.validation!;
    summary.dialogues.validated++;
    summary.by_method[dialogue.method] ??= {};
    const byLang = summary.by_method[dialogue.method]!;
    byLang[dialogue.lang] ??= { ...zeros(DIALOGUE_OUTCOMES), kept: 0, dropped: 0 };
    const cell = byLang[dialogue.lang]!;
    cell[v.outcome]++;
    cell[kept ? "kept" : "dropped"]++;
    for (const rule of new Set((v.gates ?? []).map((g) => g.rule))) {
      summary.gates[rule] ??= {};
      summary.gates[rule][dialogue.method] = (summary.gates[rule][dialogue.method] ?? 0) + 1;
    }
    for (const block of v.blocks) {
      summary.blocks_by_language[block.lang] ??= zeros(BLOCK_OUTCOMES);
      summary.blocks_by_language[block.lang]![block.outcome]++;
      if (block.reason)
        summary.not_runnable_reasons[block.reason] = (summary.not_runnable_reasons[block.reason] ?? 0) + 1;
    }
  };
  for await (const record of outputs) {
    const dialogue = validated(record);
    if (!dialogue) continue;
    count(dialogue, true);
    summary.dialogues.kept++;
    tally.add(dialogue);
  }
  for await (const reject of rejects) {
    const dialogue = validated((reject as { record?: unknown }).record);
    if (!dialogue) {
      summary.dialogues.malformed++;
      continue;
    }
    count(dialogue, false);
    summary.dialogues.dropped++;
    const reason = String((reject as { reason?: unknown }).reason ?? "");
    const by = reason.startsWith("final-code-") ? dialogue.meta.validation!.outcome : reason;
    summary.dropped_by[by] = (summary.dropped_by[by] ?? 0) + 1;
  }
  summary.kept = tally.result();
  // the records come in the order validate's workers finished them, which varies from run to run
  const byName = <T>(map: Record<string, T>) =>
    Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    ...summary,
    by_method: byName(Object.fromEntries(Object.entries(summary.by_method).map(([m, l]) => [m, byName(l)]))),
    blocks_by_language: byName(summary.blocks_by_language),
    not_runnable_reasons: byName(summary.not_runnable_reasons),
    dropped_by: byName(summary.dropped_by),
    gates: byName(Object.fromEntries(Object.entries(summary.gates).map(([r, m]) => [r, byName(m)]))),
  };
}

function zeros<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Lines for the end-of-stage log. */
export function describeValidation(summary: ValidateSummary): string[] {
  const d = summary.dialogues;
  const dropped = Object.entries(summary.dropped_by)
    .map(([o, n]) => `${n} ${o}`)
    .join(", ");
  const lines = [
    `${d.validated} dialogues validated: ${d.kept} kept, ${d.dropped} dropped` +
      `${dropped ? ` (${dropped})` : ""}${d.malformed ? `, ${d.malformed} malformed` : ""}`,
  ];
  for (const [lang, row] of Object.entries(summary.blocks_by_language).sort(
    (a, b) => total(b[1]) - total(a[1]),
  )) {
    lines.push(`${lang}: ${BLOCK_OUTCOMES.map((o) => `${row[o]} ${o}`).join(", ")}`);
  }
  if (Object.keys(summary.gates).length) {
    lines.push(
      `quality gates (dialogues tagged): ${Object.entries(summary.gates)
        .map(([rule, byMethod]) => `${total(byMethod)} ${rule}`)
        .join(", ")}`,
    );
  }
  if (Object.keys(summary.not_runnable_reasons).length) {
    lines.push(
      `not runnable: ${Object.entries(summary.not_runnable_reasons)
        .sort((a, b) => b[1] - a[1])
        .map(([r, n]) => `${n} ${r}`)
        .join(", ")}`,
    );
  }
  return lines;
}

function total(row: Record<string, number>): number {
  return Object.values(row).reduce((a, b) => a + b, 0);
}
