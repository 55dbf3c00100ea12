// People's verdicts (pipeline/review/) in the release: a dialogue some reviewer marked bad leaves it, a
// reject `review:<reason>`, unless the mark was made on other content than the dialogue has now
// (stale: it judged something else). The report's Review section: how much was reviewed, how well
// reviewers agree, and how well each automatic gate matches the records people called bad.
import { z } from "zod";
import type { Dialogue } from "../../pipeline/dialogue.js";
import type { PipelineRecord, Reject } from "../../pipeline/record.js";
import { n, table } from "../../pipeline/report/html.js";
import { agreementOf, gateScores } from "../../pipeline/review/agreement.js";
import { contentHash, type Mark, MarksStore } from "../../pipeline/review/marks.js";

const ratio = z.number().nullable();

export const reviewSummarySchema = z.object({
  reviewers: z.number(),
  /** records some reviewer judged, and of those the ones some reviewer called bad (marks not stale) */
  reviewed: z.number(),
  bad: z.number(),
  /** dialogues left out of the release for a bad mark */
  dropped: z.number(),
  /** bad marks not counted: the dialogue changed since */
  stale: z.number(),
  agreement: z.array(z.object({ a: z.string(), b: z.string(), both: z.number(), kappa: ratio })),
  /** validate's gates (and dropping outcomes) on the reviewed dialogues, against the bad marks */
  gates: z.array(
    z.object({ gate: z.string(), fired: z.number(), firedBad: z.number(), precision: ratio, recall: ratio }),
  ),
});
export type ReviewSummary = z.infer<typeof reviewSummarySchema>;

type Validation = { outcome?: string; gates?: { rule: string }[] } | undefined;

/** What an automatic check said of a dialogue: its gates, and its final code's outcome when that failed. */
function gatesOf(record: unknown): string[] {
  const validation = (record as { meta?: { validation?: Validation } } | undefined)?.meta?.validation;
  const gates = (validation?.gates ?? []).map((g) => g.rule);
  const outcome = validation?.outcome;
  if (outcome === "failed" || outcome === "timeout") gates.push(`final-code-${outcome}`);
  return gates;
}

export class ReleaseReview {
  private readonly current: Mark[];
  private readonly bad = new Map<string, Mark[]>();
  private readonly reviewed: Set<string>;
  private readonly gates = new Map<string, string[]>();
  /** the content hash of each reviewed dialogue seen, to tell a stale bad mark */
  private readonly hashes = new Map<string, string>();
  private dropped = 0;
  private stale = 0;

  constructor(dataDir: string) {
    const store = MarksStore.read(dataDir);
    try {
      this.current = store?.current() ?? [];
    } finally {
      store?.close();
    }
    this.reviewed = new Set(this.current.map((m) => m.id));
    for (const mark of this.current) {
      if (mark.verdict === "bad") this.bad.set(mark.id, [...(this.bad.get(mark.id) ?? []), mark]);
    }
  }

  /** Whether anyone has judged anything: without marks, export reads and writes what it always did. */
  get active(): boolean {
    return this.current.length > 0;
  }

  /** The reject of a dialogue some reviewer's current mark calls bad; undefined if it stays. */
  judge(dialogue: Dialogue): Reject | undefined {
    if (!this.reviewed.has(dialogue.id)) return undefined;
    this.gates.set(dialogue.id, gatesOf(dialogue));
    const marks = this.bad.get(dialogue.id);
    if (!marks) return undefined;
    const hash = contentHash(dialogue);
    this.hashes.set(dialogue.id, hash);
    const fresh = marks.find((m) => m.hash === hash);
    if (!fresh) {
      this.stale += marks.length;
      return undefined;
    }
    this.dropped++;
    return {
      id: dialogue.id,
      reason: `review:${fresh.reason ?? "other"}`,
      detail: `marked bad by ${fresh.reviewer} at ${fresh.at}${fresh.note ? `: ${fresh.note}` : ""}`,
    };
  }

  /** The Review section's figures; `rejects`: validate's, whose gates count too. */
  async summary(rejects: AsyncIterable<PipelineRecord>): Promise<ReviewSummary> {
    const { reviewed } = this;
    for await (const reject of rejects) {
      if (!reviewed.has(reject.id) || this.gates.has(reject.id)) continue;
      const record = (reject as Partial<Reject>).record;
      this.gates.set(reject.id, gatesOf(record));
      if (record !== undefined) this.hashes.set(reject.id, contentHash(record));
    }
    // bad: some reviewer's bad mark judged the content the dialogue has now
    const isBad = (id: string) => this.bad.get(id)?.some((m) => m.hash === this.hashes.get(id)) ?? false;
    const scored = [...reviewed]
      .filter((id) => this.gates.has(id))
      .map((id) => ({ bad: isBad(id), gates: this.gates.get(id)! }));
    return {
      reviewers: new Set(this.current.map((m) => m.reviewer)).size,
      reviewed: reviewed.size,
      bad: [...reviewed].filter(isBad).length,
      dropped: this.dropped,
      stale: this.stale,
      agreement: agreementOf(this.current).map((a) => ({ ...a, kappa: a.kappa ?? null })),
      gates: gateScores(scored).map((g) => ({
        ...g,
        precision: g.precision ?? null,
        recall: g.recall ?? null,
      })),
    };
  }
}

const share = (v: number | null) => (v === null ? "–" : v.toFixed(2));

/** The report's Review section; nothing when nobody reviewed. */
export function reviewSection(review: ReviewSummary | undefined): string {
  if (!review) return "";
  const agreement = review.agreement.length
    ? table(
        ["reviewer", "reviewer", "judged by both", "Cohen's kappa"],
        review.agreement.map((a) => [a.a, a.b, a.both, share(a.kappa)]),
        2,
      )
    : "<p>No record was judged by two reviewers: no agreement to show.</p>";
  const gates = review.gates.length
    ? table(
        ["gate", "fired on reviewed", "of those bad", "precision", "recall"],
        review.gates.map((g) => [g.gate, g.fired, g.firedBad, share(g.precision), share(g.recall)]),
      )
    : "<p>No automatic gate fired on a reviewed dialogue.</p>";
  return (
    '<section id="review"><h2>Review</h2>' +
    `<p>${n(review.reviewed)} records judged by ${n(review.reviewers)} reviewer(s); ${n(review.bad)} called bad; ` +
    `${n(review.dropped)} dialogues left out of the release for it` +
    `${review.stale ? `; ${n(review.stale)} bad marks not counted because the dialogue changed since (stale)` : ""}.</p>` +
    `<h3>Agreement between reviewers</h3>${agreement}` +
    `<h3>Automatic gates against people's bad marks</h3>${gates}` +
    '<p class="meta">Precision: of the reviewed dialogues a gate fired on, the share people called bad. ' +
    "Recall: of the dialogues people called bad, the share the gate fired on.</p></section>"
  );
}
