// The verdict on each audited dataset (a method that declares `audited`): of its dialogues read, how
// many were released and how many dropped, and why (the audit's own rejects: rows that are no dialogue;
// validate's drops: code that failed, a gate), by language. The card, the report and `pnpm pipeline
// audit` print it.
import type { Dialogue } from "../../pipeline/dialogue.js";
import type { Reject } from "../../pipeline/record.js";
import type { StageContext } from "../../pipeline/stage.js";
import { sourceOf } from "./rows.js";
import type { AuditVerdict } from "./stats.js";

/**
 * The verdicts of the run's audited methods (none: nothing is read). `released`: the dialogues export
 * releases; `refused`: those it rejected itself (a duplicate id, a person's mark). An audited
 * dialogue's id starts with its source's name, which is its method's.
 */
export async function auditVerdicts(
  ctx: StageContext<unknown>,
  released: readonly Pick<Dialogue, "method" | "lang" | "meta">[],
  refused: readonly Pick<Reject, "id" | "reason">[],
): Promise<AuditVerdict[]> {
  const audited = ctx.registry.methods.filter((m) => m.audited);
  if (audited.length === 0) return [];
  const verdicts = new Map<string, AuditVerdict>(
    audited.map((m) => [
      m.name,
      {
        method: m.name,
        where: m.audited!.where,
        read: 0,
        released: 0,
        released_by: {},
        dropped: 0,
        pass_rate: 0,
        dropped_by: {},
        by_lang: {},
      },
    ]),
  );
  const count = (method: string, lang: string, reason?: string, outcome?: string) => {
    const v = verdicts.get(method);
    if (!v) return;
    v.read++;
    v.by_lang[lang] ??= { released: 0, dropped: 0 };
    if (reason === undefined) {
      v.released++;
      v.by_lang[lang].released++;
      if (outcome) v.released_by[outcome] = (v.released_by[outcome] ?? 0) + 1;
      return;
    }
    v.dropped++;
    v.by_lang[lang].dropped++;
    v.dropped_by[reason] = (v.dropped_by[reason] ?? 0) + 1;
  };
  for (const d of released) {
    const outcome = (d.meta.validation as { outcome?: string } | undefined)?.outcome ?? "not validated";
    count(d.method, d.lang, undefined, outcome);
  }
  for (const r of refused) count(sourceOf(r.id), "unknown", r.reason);
  for await (const reject of ctx.read("validate", { rejects: true })) {
    const record = reject.record as Partial<Dialogue> | undefined;
    count(
      typeof record?.method === "string" ? record.method : sourceOf(reject.id),
      typeof record?.lang === "string" ? record.lang : "unknown",
      String(reject.reason),
    );
  }
  // the audit's rejects: rows that are no dialogue, or have no code where `keep_no_code` is off
  for await (const reject of ctx.read("audit", { rejects: true }))
    count(sourceOf(reject.id), "unknown", String(reject.reason));
  // by count, then name: not the order in which validate's workers finished
  const byCount = <T>(counts: Record<string, T>, size: (x: T) => number) =>
    Object.fromEntries(
      Object.entries(counts).sort((a, b) => size(b[1]) - size(a[1]) || (a[0] < b[0] ? -1 : 1)),
    );
  return [...verdicts.values()].map((v) => ({
    ...v,
    pass_rate: v.read === 0 ? 0 : Math.round((v.released / v.read) * 10_000) / 10_000,
    released_by: byCount(v.released_by, (x) => x),
    dropped_by: byCount(v.dropped_by, (x) => x),
    by_lang: byCount(v.by_lang, (c) => c.released + c.dropped),
  }));
}

/** The verdict as text: a line per dataset, then its drops by reason and its languages. */
export function describeAudits(verdicts: readonly AuditVerdict[]): string[] {
  return verdicts.flatMap((v) => [
    `${v.method} (${v.where}): ${v.read} dialogues read, ${v.released} released, ${v.dropped} dropped (pass rate ${(v.pass_rate * 100).toFixed(1)}%)`,
    ...Object.entries(v.released_by).map(([outcome, n]) => `  released ${outcome}: ${n}`),
    ...Object.entries(v.dropped_by).map(([reason, n]) => `  dropped ${reason}: ${n}`),
    ...Object.entries(v.by_lang)
      .sort((a, b) => b[1].released + b[1].dropped - (a[1].released + a[1].dropped))
      .map(([lang, c]) => `  ${lang}: ${c.released} released, ${c.dropped} dropped`),
  ]);
}
