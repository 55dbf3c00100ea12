// What a dialogue stage's summary starts from: its own dialogues read back, tallied by method
// (DialogueTally: dialogues, turns, languages, next to the paper's figures, logged), each handed to
// the stage for its own counts; and how a set of counts reads in the end-of-stage log.
import { z } from "zod";
import { type Dialogue, DialogueTally, parseDialogue } from "../../pipeline/dialogue.js";
import type { StageContext } from "../../pipeline/stage.js";

/** Counts by name (reject reasons, statuses, categories), as a summary keeps them. */
export const countsSchema = z.record(z.string(), z.number());

/** The stage's own dialogues, each handed to `each`, tallied by method; the tally's lines logged. */
export async function tallyDialogues<C>(
  ctx: StageContext<C>,
  each: (dialogue: Dialogue) => void,
): Promise<DialogueTally> {
  const tally = new DialogueTally(ctx.registry.methodsOf(ctx.name));
  for await (const record of ctx.read(ctx.name)) {
    const parsed = parseDialogue(record);
    if (!parsed.ok) continue;
    tally.add(parsed.dialogue);
    each(parsed.dialogue);
  }
  for (const line of tally.describe()) ctx.log.info(line);
  return tally;
}

/** `name n, name n`, in the counts' own order. */
export function countsLine(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([name, n]) => `${name} ${n}`)
    .join(", ");
}
