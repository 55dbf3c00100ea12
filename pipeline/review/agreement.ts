// How far people's verdicts can be trusted and how well the automatic gates match them: Cohen's kappa
// between two reviewers over the records both judged, and each gate's precision and recall against
// the records people called bad.
import type { Mark, Verdict } from "./marks.js";

/** Cohen's kappa of paired verdicts; undefined for no pairs, or when chance alone explains them all. */
export function cohensKappa(pairs: readonly (readonly [Verdict, Verdict])[]): number | undefined {
  if (pairs.length === 0) return undefined;
  const n = pairs.length;
  const agreed = pairs.filter(([a, b]) => a === b).length / n;
  const badA = pairs.filter(([a]) => a === "bad").length / n;
  const badB = pairs.filter(([, b]) => b === "bad").length / n;
  const chance = badA * badB + (1 - badA) * (1 - badB);
  return chance === 1 ? undefined : (agreed - chance) / (1 - chance);
}

export interface ReviewerAgreement {
  a: string;
  b: string;
  /** records both judged */
  both: number;
  kappa: number | undefined;
}

/** Kappa for every two reviewers who judged a record in common, from each one's current verdicts. */
export function agreementOf(current: readonly Mark[]): ReviewerAgreement[] {
  const byReviewer = new Map<string, Map<string, Verdict>>();
  for (const mark of current) {
    const verdicts = byReviewer.get(mark.reviewer) ?? new Map<string, Verdict>();
    verdicts.set(mark.id, mark.verdict);
    byReviewer.set(mark.reviewer, verdicts);
  }
  const names = [...byReviewer.keys()].sort();
  const result: ReviewerAgreement[] = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const a = byReviewer.get(names[i]!)!;
      const b = byReviewer.get(names[j]!)!;
      const pairs: [Verdict, Verdict][] = [];
      for (const [id, verdict] of a) {
        const other = b.get(id);
        if (other) pairs.push([verdict, other]);
      }
      if (pairs.length > 0)
        result.push({ a: names[i]!, b: names[j]!, both: pairs.length, kappa: cohensKappa(pairs) });
    }
  }
  return result;
}

export interface GateScore {
  gate: string;
  /** reviewed records the gate fired on */
  fired: number;
  /** of those, the ones people called bad */
  firedBad: number;
  /** firedBad / fired; undefined when it never fired */
  precision: number | undefined;
  /** firedBad / all bad; undefined when nobody called anything bad */
  recall: number | undefined;
}

/** Each gate that fired on a reviewed record, against people's verdicts on those records. */
export function gateScores(reviewed: readonly { bad: boolean; gates: readonly string[] }[]): GateScore[] {
  const bad = reviewed.filter((r) => r.bad).length;
  const counts = new Map<string, { fired: number; firedBad: number }>();
  for (const record of reviewed) {
    for (const gate of new Set(record.gates)) {
      const c = counts.get(gate) ?? { fired: 0, firedBad: 0 };
      c.fired++;
      if (record.bad) c.firedBad++;
      counts.set(gate, c);
    }
  }
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([gate, c]) => ({
      gate,
      ...c,
      precision: c.firedBad / c.fired,
      recall: bad > 0 ? c.firedBad / bad : undefined,
    }));
}
