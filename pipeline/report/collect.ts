// What the report shows, gathered from the stage manifests alone (counts, LLM usage, timings and each
// stage's end-of-run summary), so it can be rebuilt at any time, from whatever stages have run, without
// reading a record. A stage without a manifest is "not run"; a summary whose shape is not what this
// file expects leaves its section empty rather than failing the report.
import path from "node:path";
import { DIALOGUE_METHODS, type DialogueMethod, PAPER_DIALOGUE_STATS, paperShape } from "../dialogue.js";
import type { StageRegistry } from "../registry.js";
import { type Manifest, readManifest, type StageCounts } from "../store/manifest.js";
import type { UsageTotals } from "../usage.js";
import { compareLanguages, type LanguageShare } from "./paper.js";

export interface StageRow {
  name: string;
  /** complete, partial, running, stale (as the runner judges it), or "not run" */
  state: string;
  reason?: string | undefined;
  counts?: StageCounts | undefined;
  usage?: UsageTotals | undefined;
  elapsedMs?: number | undefined;
  finishedAt?: string | undefined;
}

export interface FlowStep {
  label: string;
  stage: string;
  /** undefined: the stage has not run (or did not say) */
  records?: number | undefined;
}

export interface FunnelRound {
  round: number;
  prompt: string;
  scored: number;
  passed: number;
  /** "1".."5" and "unscored" -> records */
  histogram: Record<string, number>;
  /** the lowest passing score, when the histogram and `passed` agree on one */
  threshold?: number | undefined;
}

export type LanguageRow = LanguageShare;

export interface MethodRow {
  method: DialogueMethod;
  /** the stage that makes this method's dialogues (none when no registered stage declares it) */
  stage: string;
  /** as the dialogue stages made them; undefined when the stage has not run */
  generated?: { dialogues: number; turns: number } | undefined;
  /** what validation kept (what export releases) */
  kept?: { dialogues: number; turns: number } | undefined;
  paper: { dialogues: number; turnsPerDialogue: number };
}

export interface ValidationData {
  dialogues: { validated: number; kept: number; dropped: number; malformed: number };
  /** final-code outcome -> dialogues, per method */
  byMethod: { method: string; outcomes: Record<string, number> }[];
  blocksByLanguage: Record<string, Record<string, number>>;
  notRunnable: Record<string, number>;
  /** quality gate -> method -> dialogues it tagged (kept or dropped) */
  gates: Record<string, Record<string, number>>;
}

export interface ReportData {
  generatedAt: string;
  dataDir: string;
  stages: StageRow[];
  flow: FlowStep[];
  funnel?: { in: number; kept: number; rounds: FunnelRound[] } | undefined;
  languages?: { total: number; rows: LanguageRow[]; other: Record<string, number> } | undefined;
  methods: MethodRow[];
  /** dialogue stages switched off in the config */
  disabled: string[];
  /** every method's turns per dialogue (kept, else made) beside the paper's; undefined before any ran */
  shape?: ReturnType<typeof paperShape> | undefined;
  validation?: ValidationData | undefined;
  exportFiles: { name: string; rows?: number | undefined; bytes?: number | undefined }[];
}

export interface CollectOptions {
  /** the stages and the dialogue methods each makes (the list the CLI hands down) */
  registry: StageRegistry;
  /** the state of each stage as the runner judges it (stale, running); default: each manifest's own */
  states?: Record<string, { state: string; reason?: string | undefined }>;
  /**
   * a stage calling this at its end, before the runner has written its manifest: its figures (shown
   * as `state`, by default "complete": the report is the stage's last act)
   */
  pending?: Record<
    string,
    { state?: string; counts?: StageCounts; usage?: UsageTotals; stats?: Record<string, unknown> }
  >;
  now?: Date;
  /** dialogue stages the config switches off: shown as "not run (disabled)", never as 0 or missing */
  disabled?: readonly string[];
  /**
   * each stage's manifest as the runner reads it (Runner.manifestOf: a sharded stage's shards summed,
   * with the whole stage's summary); default: `<stage>/manifest.json`, which a sharded stage has not
   */
  manifests?: ReadonlyMap<string, Manifest | undefined>;
}

type Json = Record<string, unknown>;

/** The state of a stage the config switches off. */
export const DISABLED = "not run (disabled)";

/** The stage of a method no registered stage declares (so it never ran). */
const NO_STAGE = "no stage";

const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);
const num = (x: unknown): number | undefined => (typeof x === "number" && Number.isFinite(x) ? x : undefined);

export function collectReport(dataDir: string, options: CollectOptions): ReportData {
  const { registry } = options;
  const manifests = new Map<string, Manifest | undefined>();
  for (const name of registry.names) {
    manifests.set(
      name,
      options.manifests ? options.manifests.get(name) : readManifest(path.join(dataDir, name)),
    );
  }
  const stats = (name: string): Json | undefined => {
    const s = options.pending?.[name]?.stats ?? manifests.get(name)?.stats;
    return isObject(s) ? s : undefined;
  };
  const counts = (name: string) => options.pending?.[name]?.counts ?? manifests.get(name)?.counts;

  // switched off in the config, or so judged by the runner (state "disabled")
  const disabled = [
    ...new Set([
      ...(options.disabled ?? []),
      ...Object.entries(options.states ?? {})
        .filter(([, s]) => s.state === "disabled")
        .map(([name]) => name),
    ]),
  ];
  const stages: StageRow[] = registry.names.map((name) => {
    const m = manifests.get(name);
    const pending = options.pending?.[name];
    const judged = options.states?.[name];
    if (disabled.includes(name)) return { name, state: DISABLED };
    return {
      name,
      state: judged?.state ?? (pending ? (pending.state ?? "complete") : (m?.state ?? "not run")),
      reason: judged?.reason,
      counts: pending?.counts ?? m?.counts,
      usage: pending?.usage ?? m?.usage,
      elapsedMs: m?.elapsedMs,
      finishedAt: m?.finishedAt,
    };
  });
  const ran = (name: string) => {
    const state = stages.find((s) => s.name === name)?.state;
    return state !== "not run" && state !== DISABLED;
  };

  const funnel = readFunnel(stats("filter"));
  const exportStats = stats("export");
  const flow: FlowStep[] = [
    { label: "seed pool (normalize)", stage: "normalize", records: counts("normalize")?.out },
    { label: "after dedup", stage: "dedup", records: counts("dedup")?.out },
    ...(funnel?.rounds.length
      ? funnel.rounds.map((r) => ({
          label: `filter round ${r.round} passed`,
          stage: "filter",
          records: r.passed,
        }))
      : [{ label: "filter kept", stage: "filter", records: counts("filter")?.out }]),
    ...registry.dialogueStages.map((name) => ({
      label: `${name} dialogues`,
      stage: name,
      records: counts(name)?.out,
    })),
    { label: "validated, kept", stage: "validate", records: counts("validate")?.out },
    {
      label: "exported dialogues",
      stage: "export",
      records: num(isObject(exportStats?.code_feedback) ? exportStats.code_feedback.dialogues : undefined),
    },
  ].map((step) => (ran(step.stage) ? step : { ...step, records: undefined }));

  const methods = readMethods(
    registry,
    registry.dialogueStages.filter(ran).map((name) => ({ name, stats: stats(name) })),
    stats("validate"),
    exportStats,
  );
  const shown = Object.fromEntries(methods.map((m) => [m.method, m.kept ?? m.generated]));
  return {
    generatedAt: (options.now ?? new Date()).toISOString(),
    dataDir: path.resolve(dataDir),
    stages,
    flow,
    funnel,
    languages: readLanguages(stats("filter"), exportStats),
    methods,
    disabled: registry.dialogueStages.filter((s) => disabled.includes(s)),
    shape: methods.some((m) => m.generated || m.kept)
      ? paperShape(shown, registry.methodsOfStages(disabled))
      : undefined,
    validation: readValidation(stats("validate")),
    exportFiles: Array.isArray(exportStats?.files)
      ? exportStats.files
          .filter(isObject)
          .map((f) => ({ name: String(f.name), rows: num(f.rows), bytes: num(f.bytes) }))
      : [],
  };
}

function readFunnel(stats: Json | undefined): ReportData["funnel"] {
  if (!stats || !Array.isArray(stats.rounds)) return undefined;
  const rounds = stats.rounds.filter(isObject).map((r, i): FunnelRound => {
    const histogram: Record<string, number> = {};
    if (isObject(r.histogram)) for (const [k, v] of Object.entries(r.histogram)) histogram[k] = num(v) ?? 0;
    const passed = num(r.passed) ?? 0;
    return {
      round: num(r.round) ?? i + 1,
      prompt: String(r.prompt ?? ""),
      scored: num(r.scored) ?? 0,
      passed,
      histogram,
      threshold: passingThreshold(histogram, passed),
    };
  });
  return { in: num(stats.in) ?? 0, kept: num(stats.kept) ?? 0, rounds };
}

/** The score s such that the records scored s..5 are exactly those that passed. */
function passingThreshold(histogram: Record<string, number>, passed: number): number | undefined {
  for (let s = 1; s <= 5; s++) {
    let atLeast = 0;
    for (let t = s; t <= 5; t++) atLeast += histogram[String(t)] ?? 0;
    if (atLeast === passed && passed > 0) return s;
  }
  return undefined;
}

function readLanguages(filter: Json | undefined, exported: Json | undefined): ReportData["languages"] {
  const counts: Record<string, number> = {};
  if (isObject(filter?.by_lang)) {
    for (const [lang, row] of Object.entries(filter.by_lang)) {
      const kept = isObject(row) ? num(row.kept) : undefined;
      if (kept) counts[lang] = kept;
    }
  } else if (isObject(exported?.filtered_instruction) && isObject(exported.filtered_instruction.by_lang)) {
    for (const [lang, n] of Object.entries(exported.filtered_instruction.by_lang))
      if (num(n)) counts[lang] = n as number;
  }
  return compareLanguages(counts);
}

/** `{method: {dialogues, turns}}` entries of a summary (DialogueTally's shape). */
function tallies(stats: Json | undefined): Map<string, { dialogues: number; turns: number }> {
  const out = new Map<string, { dialogues: number; turns: number }>();
  if (!stats) return out;
  for (const method of DIALOGUE_METHODS) {
    const entry = stats[method];
    if (isObject(entry) && num(entry.dialogues) !== undefined) {
      out.set(method, { dialogues: num(entry.dialogues)!, turns: num(entry.turns) ?? 0 });
    }
  }
  return out;
}

function readMethods(
  registry: StageRegistry,
  ranStages: { name: string; stats: Json | undefined }[],
  validate: Json | undefined,
  exported: Json | undefined,
) {
  const generated = new Map<string, { dialogues: number; turns: number }>();
  // a stage that ran and made none of a method's dialogues made 0 of them: it is not "not run"
  for (const method of DIALOGUE_METHODS) {
    if (ranStages.some((s) => s.name === registry.stageOfMethod(method)))
      generated.set(method, { dialogues: 0, turns: 0 });
  }
  for (const { stats } of ranStages) {
    for (const [method, t] of tallies(stats)) {
      const sum = generated.get(method) ?? { dialogues: 0, turns: 0 };
      generated.set(method, { dialogues: sum.dialogues + t.dialogues, turns: sum.turns + t.turns });
    }
  }
  const keptSource = isObject(validate?.kept)
    ? validate.kept
    : isObject(exported?.code_feedback) && isObject(exported.code_feedback.by_method)
      ? exported.code_feedback.by_method
      : undefined;
  const kept = tallies(keptSource);
  return DIALOGUE_METHODS.map(
    (method): MethodRow => ({
      method,
      stage: registry.stageOfMethod(method) ?? NO_STAGE,
      generated: generated.get(method),
      kept:
        kept.get(method) ?? (keptSource && generated.has(method) ? { dialogues: 0, turns: 0 } : undefined),
      paper: PAPER_DIALOGUE_STATS[method],
    }),
  );
}

function readValidation(stats: Json | undefined): ValidationData | undefined {
  if (!stats || !isObject(stats.dialogues)) return undefined;
  const d = stats.dialogues;
  const byMethod: ValidationData["byMethod"] = [];
  if (isObject(stats.by_method)) {
    for (const [method, byLang] of Object.entries(stats.by_method)) {
      if (!isObject(byLang)) continue;
      const outcomes: Record<string, number> = {};
      for (const cell of Object.values(byLang)) {
        if (!isObject(cell)) continue;
        for (const [k, v] of Object.entries(cell)) {
          if (k !== "kept" && k !== "dropped" && num(v) !== undefined)
            outcomes[k] = (outcomes[k] ?? 0) + (v as number);
        }
      }
      byMethod.push({ method, outcomes });
    }
  }
  const table = (x: unknown): Record<string, Record<string, number>> => {
    const out: Record<string, Record<string, number>> = {};
    if (isObject(x)) {
      for (const [k, row] of Object.entries(x)) {
        if (!isObject(row)) continue;
        out[k] = Object.fromEntries(Object.entries(row).map(([o, n]) => [o, num(n) ?? 0]));
      }
    }
    return out;
  };
  const notRunnable: Record<string, number> = {};
  if (isObject(stats.not_runnable_reasons)) {
    for (const [k, v] of Object.entries(stats.not_runnable_reasons)) notRunnable[k] = num(v) ?? 0;
  }
  return {
    dialogues: {
      validated: num(d.validated) ?? 0,
      kept: num(d.kept) ?? 0,
      dropped: num(d.dropped) ?? 0,
      malformed: num(d.malformed) ?? 0,
    },
    byMethod,
    blocksByLanguage: table(stats.blocks_by_language),
    notRunnable,
    gates: table(stats.gates),
  };
}
