// What pack says at the end, next to the paper's figures (105K single turns -> 16.6K dialogues,
// 33.5K turns): dialogues, turns, turns per dialogue by way of DialogueTally; and what the dialogues
// alone cannot tell: queries bypassed, queries left single, by language, and the embedder's work.
import { z } from "zod";
import { type DialogueMethod, DialogueTally, methodTallyKeys } from "../../pipeline/dialogue.js";
import type { StageContext } from "../../pipeline/stage.js";

const groupSchema = z.object({
  queries: z.number(),
  dialogues: z.number(),
  packed: z.number(),
  bypassed: z.number(),
  single: z.number(),
  /** whether the kNN index was built, or read back from the work dir */
  index: z.enum(["built", "reused"]),
});

const embeddingSchema = z.object({
  model: z.string(),
  texts: z.number(),
  cached: z.number(),
  computed: z.number(),
  batches: z.number(),
  truncated: z.number(),
  problems: z.number(),
});

/** Counted while packing (the stage's per-run state), for the summary. */
export interface PackStats {
  /** filter's records read */
  input: number;
  /** records of the packed languages with a usable query and answer */
  selected: number;
  /** records left out because their language is not packed, by language */
  other_languages: Record<string, number>;
  /** per packing group (a language, or `all`) */
  groups: Record<string, z.infer<typeof groupSchema>>;
  embedding: z.infer<typeof embeddingSchema> | undefined;
  /** the join sizes packed with */
  join?: number[];
}

/** Which reading of the paper `join` is: its table's ([1]), its text's ([2, 3]), or neither. */
export function packingReading(join: readonly number[] | undefined): "table" | "text" | "custom" {
  const key = [...new Set(join ?? [])].sort((a, b) => a - b).join(",");
  return key === "1" ? "table" : key === "2,3" ? "text" : "custom";
}

const READINGS = {
  table: "the paper's table (a query and one neighbour, 2.0 turns per dialogue)",
  text: "the paper's text (2 or 3 neighbours join a query)",
  custom: "neither of the paper's readings (docs/pack.md)",
};

export const PAPER_PACKING = { single_turns: 105_000, dialogues: 16_600, turns: 33_500 };

export const SINGLE_TURN_PACKING = {
  name: "single-turn-packing",
  prefix: "pack",
  paper: { dialogues: 16_600, turnsPerDialogue: 2.0 },
  card: "single-turn packing (similar queries joined by sentence embeddings and nearest neighbours)",
} as const satisfies DialogueMethod;

/** Pack's summary, as its manifest keeps it. */
export const packSummarySchema = z.object({
  ...methodTallyKeys([SINGLE_TURN_PACKING]),
  single_turns: z.number(),
  packed: z.number(),
  bypassed: z.number(),
  left_single: z.number(),
  by_language: z.record(z.string(), groupSchema).optional(),
  other_languages: z.record(z.string(), z.number()).optional(),
  embedding: embeddingSchema.optional(),
  join: z.array(z.number()).optional(),
  reading: z.enum(["table", "text", "custom"]),
  paper: z.object({ single_turns: z.number(), dialogues: z.number(), turns: z.number() }),
});
export type PackSummary = z.infer<typeof packSummarySchema>;

export async function summarizePack(
  ctx: StageContext<unknown>,
  stats: PackStats | undefined,
): Promise<PackSummary> {
  const { log } = ctx;
  const tally = await DialogueTally.of([SINGLE_TURN_PACKING], ctx.read(ctx.name));
  const groups = Object.values(stats?.groups ?? {});
  const sum = (f: (g: (typeof groups)[number]) => number) => groups.reduce((n, g) => n + f(g), 0);
  // the records that reached the packing: selected ones whose vector was usable
  const singleTurns = sum((g) => g.queries);
  const result = {
    ...tally.result(),
    single_turns: singleTurns,
    packed: sum((g) => g.packed),
    bypassed: sum((g) => g.bypassed),
    left_single: sum((g) => g.single),
    by_language: stats?.groups,
    other_languages: stats?.other_languages,
    embedding: stats?.embedding,
    join: stats?.join,
    reading: packingReading(stats?.join),
    paper: PAPER_PACKING,
  };
  if (stats?.join) log.info(`join ${JSON.stringify(stats.join)}: ${READINGS[result.reading]}`);
  for (const line of tally.describe()) log.info(line);
  log.info(
    `from ${singleTurns.toLocaleString("en-US")} single turns (paper: 105K): ` +
      `${result.packed.toLocaleString("en-US")} packed, ${result.bypassed.toLocaleString("en-US")} bypassed, ` +
      `${result.left_single.toLocaleString("en-US")} left single`,
  );
  if (stats?.embedding) {
    const e = stats.embedding;
    log.info(
      `embeddings by ${e.model}: ${e.cached} cached, ${e.computed} computed in ${e.batches} batches, ${e.truncated} truncated, ${e.problems} unusable`,
    );
  }
  return result;
}
