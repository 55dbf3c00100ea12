// The filter's funnel, as the paper reports it (287,252 -> 191,122 -> 156,526): records in, each
// round's score histogram and survivors, records kept, and the same split by source and language.
// Computed from the stage's committed outputs and rejects, so a resumed run reports the same.
import { z } from "zod";
import type { PipelineRecord, Reject } from "../../pipeline/record.js";
import type { StageContext } from "../../pipeline/stage.js";
import type { RoundScore } from "./complexity.js";
import type { FilterConfig } from "./config.js";

const inKept = z.record(z.string(), z.object({ in: z.number(), kept: z.number() }));

/** Filter's summary, as its manifest keeps it: the funnel. */
export const filterSummarySchema = z.object({
  in: z.number(),
  kept: z.number(),
  rejected: z.record(z.string(), z.number()),
  rounds: z.array(
    z.object({
      round: z.number(),
      prompt: z.string(),
      /** records this round scored (or tried to) */
      scored: z.number(),
      /** score -> records; "unscored" for answers without a readable score */
      histogram: z.record(z.string(), z.number()),
      /** scores that needed the reminder */
      reminded: z.number(),
      passed: z.number(),
    }),
  ),
  by_resource: inKept,
  by_lang: inKept,
});
export type FilterSummary = z.infer<typeof filterSummarySchema>;

/** The funnel of filter's kept records and rejects, as they are committed. */
export async function countFunnel(ctx: StageContext<FilterConfig>): Promise<FilterSummary> {
  const { rounds: prompts, threshold } = ctx.config;
  const funnel: FilterSummary = {
    in: 0,
    kept: 0,
    rejected: {},
    rounds: prompts.map((prompt, i) => ({
      round: i + 1,
      prompt,
      scored: 0,
      histogram: { "1": 0, "2": 0, "3": 0, "4": 0, "5": 0, unscored: 0 },
      reminded: 0,
      passed: 0,
    })),
    by_resource: {},
    by_lang: {},
  };
  const count = (record: PipelineRecord, kept: boolean) => {
    funnel.in++;
    tally(funnel.by_resource, String(record.resource ?? "unknown"), kept);
    tally(funnel.by_lang, String(record.lang ?? "unknown"), kept);
    const scores = Array.isArray(record.complexity) ? (record.complexity as RoundScore[]) : [];
    for (const s of scores) {
      const round = funnel.rounds[s.round - 1];
      if (!round) continue;
      round.scored++;
      const bin = s.score === null ? "unscored" : String(s.score);
      round.histogram[bin] = (round.histogram[bin] ?? 0) + 1;
      if (s.reminded && s.score !== null) round.reminded++;
      if (s.score !== null && s.score >= threshold) round.passed++;
    }
  };
  for await (const record of ctx.read(ctx.name)) {
    funnel.kept++;
    count(record, true);
  }
  for await (const entry of ctx.read(ctx.name, { rejects: true })) {
    const reject = entry as unknown as Reject;
    funnel.rejected[reject.reason] = (funnel.rejected[reject.reason] ?? 0) + 1;
    if (reject.record && typeof reject.record === "object") count(reject.record as PipelineRecord, false);
    else funnel.in++;
  }
  return funnel;
}

/** A few lines for the terminal. */
export function describeFunnel(f: FilterSummary): string[] {
  const n = (x: number) => x.toLocaleString("en-US");
  const pct = (a: number, b: number) => (b === 0 ? "-" : `${((100 * a) / b).toFixed(1)}%`);
  const chain = [
    `${n(f.in)} in`,
    ...f.rounds.map((r) => `${n(r.passed)} pass round ${r.round} (${r.prompt})`),
  ];
  const lines = [`funnel: ${chain.join(" -> ")}; kept ${n(f.kept)} (${pct(f.kept, f.in)})`];
  for (const r of f.rounds) {
    const bins = ["1", "2", "3", "4", "5"].map((b) => `${b}: ${n(r.histogram[b] ?? 0)}`).join("  ");
    lines.push(
      `  round ${r.round} ${r.prompt}: ${bins}  unscored: ${n(r.histogram.unscored ?? 0)}` +
        (r.reminded ? `  (${n(r.reminded)} scored after a reminder)` : ""),
    );
  }
  const reasons = Object.entries(f.rejected).map(([reason, count]) => `${reason} ${n(count)}`);
  if (reasons.length) lines.push(`  rejected: ${reasons.join(", ")}`);
  lines.push(`  by resource: ${split(f.by_resource, n, pct)}`);
  lines.push(`  by language: ${split(f.by_lang, n, pct)}`);
  return lines;
}

function tally(table: Record<string, { in: number; kept: number }>, key: string, kept: boolean): void {
  const row = table[key] ?? { in: 0, kept: 0 };
  table[key] = row;
  row.in++;
  if (kept) row.kept++;
}

function split(
  table: Record<string, { in: number; kept: number }>,
  n: (x: number) => string,
  pct: (a: number, b: number) => string,
): string {
  const rows = Object.entries(table).sort((a, b) => b[1].in - a[1].in);
  const shown = rows.slice(0, 12).map(([k, v]) => `${k} ${n(v.kept)}/${n(v.in)} (${pct(v.kept, v.in)})`);
  if (rows.length > 12) shown.push(`... ${rows.length - 12} more in the manifest`);
  return shown.join(", ") || "-";
}
