// The unit that flows between stages. Every record has a stable `id` that says where it came from
// (e.g. `magicoder:000123`), so resume, dedup and reports can name it.

export interface PipelineRecord {
  id: string;
  [field: string]: unknown;
}

/** A record a stage could not (or chose not to) carry forward, with the reason. */
export interface Reject {
  /** id of the input record (or of the raw row) that was rejected */
  id: string;
  /** short machine-readable reason, e.g. `empty-query`, `score-below-threshold`, `llm-error` */
  reason: string;
  /** human-readable detail: the parse error, the scores, the server's message... */
  detail?: string;
  /** the offending record (or a prefix of a huge one), for inspection */
  record?: unknown;
}

/** What a record-wise stage returns for one input record. */
export interface RecordOutcome {
  out?: PipelineRecord[];
  rejects?: Reject[];
  /**
   * Set when the record could not be processed because of an operational failure (LLM down, sandbox error)
   * rather than its content. A failed record counts as done for this run but is retried on the next `run`.
   */
  failed?: { reason: string; detail?: string };
}
