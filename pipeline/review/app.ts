// The review app's operations, whatever asks (the HTTP server, `pipeline show`, `review mark`): list
// a stage's records, show one, mark one, and draw a fair queue to walk through.
import { hash } from "node:crypto";
import { UserError } from "../errors.js";
import { type Mark, MarksStore, type Verdict } from "./marks.js";
import {
  type Filter,
  type Kind,
  NotFound,
  ReviewIndex,
  type ReviewSource,
  type Row,
  type Sort,
  type StageLook,
} from "./records.js";
import { type RecordView, recordView } from "./view.js";

/** A stage as the app lists it: where it stands, and how many records it has committed. */
type StageInfo = Omit<StageLook, "parts"> & { outputs: number; rejects: number };

export class ReviewApp {
  readonly index: ReviewIndex;
  private marksStore: MarksStore | undefined;

  constructor(
    readonly source: ReviewSource,
    /** every reason a bad mark may give */
    readonly reasons: readonly string[],
  ) {
    this.index = new ReviewIndex(source);
  }

  close(): void {
    this.index.close();
    this.marksStore?.close();
  }

  private marks(): MarksStore {
    this.marksStore ??= MarksStore.open(this.source.dataDir);
    return this.marksStore;
  }

  /** Every stage with its state and how many records it has committed. */
  stages(): StageInfo[] {
    return this.source.stages.map((name) => {
      const look = this.index.refresh(name);
      return {
        name,
        state: look.state,
        ...(look.reason ? { reason: look.reason } : {}),
        outputs: this.index.list(name, "o", {}, { size: 1 }).total,
        rejects: this.index.list(name, "r", {}, { size: 1 }).total,
      };
    });
  }

  /** Whether any stage has committed anything: a data dir with no runs has nothing to review. */
  hasRuns(): boolean {
    return this.source.stages.some((name) => this.source.look(name).parts.length > 0);
  }

  list(stage: string, kind: Kind, filter: Filter, options: { sort?: Sort; page?: number; size?: number }) {
    this.index.refresh(stage);
    const listed = this.index.list(stage, kind, filter, options);
    const marks = this.currentMarks(listed.rows);
    return { ...listed, rows: listed.rows.map((row) => ({ ...row, marks: marks.get(row.id) ?? [] })) };
  }

  facets(stage: string, kind: Kind) {
    this.index.refresh(stage);
    return this.index.facets(stage, kind);
  }

  /** Each reviewer's verdict on the rows' ids, with whether it judged other content than the row's. */
  private currentMarks(
    rows: readonly Row[],
  ): Map<string, { reviewer: string; verdict: Verdict; stale: boolean }[]> {
    const result = new Map<string, { reviewer: string; verdict: Verdict; stale: boolean }[]>();
    for (const row of rows) {
      const latest = new Map<string, Mark>();
      for (const mark of this.marks().history(row.id)) latest.set(mark.reviewer, mark);
      if (latest.size)
        result.set(
          row.id,
          [...latest.values()].map((m) => ({
            reviewer: m.reviewer,
            verdict: m.verdict,
            stale: m.hash !== row.hash,
          })),
        );
    }
    return result;
  }

  /** The record `id` of `stage` (its outputs, else its rejects, unless `kind` says which). */
  record(stage: string, id: string, kind?: Kind): RecordView {
    const look = this.index.refresh(stage);
    const looks = new Map([[stage, look]]);
    // a record's links name the other stages: index them too, as far as they have got
    for (const other of this.source.stages) if (other !== stage) looks.set(other, this.index.refresh(other));
    const found =
      (kind !== "r" ? this.index.read(stage, "o", id) : undefined) ??
      (kind !== "o" ? this.index.read(stage, "r", id) : undefined);
    if (!found)
      throw new NotFound(
        `${stage} has no record ${id}${look.state !== "complete" ? ` (it is ${look.state})` : ""}`,
      );
    const release = this.source.release;
    const made = release && looks.get(release.stage);
    return recordView(
      this.index,
      this.marks(),
      look,
      found,
      made ? { ...release, state: made.state } : undefined,
    );
  }

  /** Records a verdict on `id` as it is now in `stage`. */
  mark(input: {
    stage: string;
    id: string;
    verdict: string;
    reason?: string | undefined;
    note?: string | undefined;
    reviewer: string;
  }): Mark {
    if (input.verdict !== "good" && input.verdict !== "bad")
      throw new UserError(`a verdict is good or bad, not ${JSON.stringify(input.verdict)}`);
    if (input.reason !== undefined && input.reason !== "" && !this.reasons.includes(input.reason))
      throw new UserError(
        `unknown reason ${JSON.stringify(input.reason)}; the reasons are: ${this.reasons.join(", ")}`,
      );
    if (!input.reviewer.trim()) throw new UserError("a mark needs a reviewer's name (--reviewer)");
    const view = this.record(input.stage, input.id);
    return this.marks().add({
      stage: input.stage,
      id: input.id,
      verdict: input.verdict,
      reason: input.verdict === "bad" ? input.reason || "other" : undefined,
      note: input.note || undefined,
      reviewer: input.reviewer.trim(),
      hash: view.hash,
    });
  }

  /**
   * `count` of the stage's outputs, stratified by method and language: every stratum one while there
   * is room (the largest first), then each its share of the rest (largest remainders), and within it the records
   * with the smallest SHA-256 of (seed, id), so a seed draws the same queue from the same records.
   */
  sample(stage: string, count: number, seed: number): string[] {
    this.index.refresh(stage);
    const strata = new Map<string, { id: string; key: string }[]>();
    for (const r of this.index.strata(stage)) {
      const name = `${r.method ?? ""}\n${r.lang ?? ""}`;
      const list = strata.get(name) ?? [];
      list.push({ id: r.id, key: hash("sha256", `${seed}\n${r.id}`) });
      strata.set(name, list);
    }
    const total = [...strata.values()].reduce((sum, s) => sum + s.length, 0);
    if (total <= count) return [...strata.values()].flat().map((r) => r.id);
    const names = [...strata.keys()].sort();
    const size = (name: string) => strata.get(name)!.length;
    // one for every stratum while there is room (the largest first), the rest by share
    const bySize = [...names].sort((a, b) => size(b) - size(a) || (a < b ? -1 : 1));
    const quota = new Map(names.map((n) => [n, bySize.indexOf(n) < count ? 1 : 0]));
    const rest = count - Math.min(count, names.length);
    for (const n of names)
      quota.set(n, Math.min(size(n), quota.get(n)! + Math.floor((size(n) * rest) / total)));
    let left = count - [...quota.values()].reduce((a, b) => a + b, 0);
    const byRemainder = [...names].sort(
      (a, b) => ((size(b) * rest) % total) - ((size(a) * rest) % total) || (a < b ? -1 : 1),
    );
    while (left > 0) {
      for (const name of byRemainder) {
        if (left === 0) break;
        if (quota.get(name)! >= size(name)) continue;
        quota.set(name, quota.get(name)! + 1);
        left--;
      }
    }
    const queue: string[] = [];
    for (const name of names) {
      const members = strata.get(name)!.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      queue.push(...members.slice(0, quota.get(name)).map((m) => m.id));
    }
    // walked in a mixed order, not stratum after stratum
    return queue.sort((a, b) => {
      const ka = hash("sha256", `${seed}\nqueue\n${a}`);
      const kb = hash("sha256", `${seed}\nqueue\n${b}`);
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  }

  /** Every mark, oldest first, for `review export-marks`. */
  allMarks(): Iterable<Mark> {
    return this.marks().all();
  }
}
