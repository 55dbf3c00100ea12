// What the report shows, gathered from the stage manifests alone (counts, LLM usage, timings and each
// stage's end-of-run summary), so it can be rebuilt at any time, from whatever stages have run, without
// reading a record. A stage without a manifest is "not run". A summary is read only through its stage's
// schema (view.ts); the stages' own report parts (contract.ts) make the flow chart and their sections.
import path from "node:path";
import type { StageRegistry } from "../registry.js";
import { type Manifest, readManifest } from "../store/manifest.js";
import type { FlowStep, ReportingStage, StageRow } from "./contract.js";
import { DISABLED, makeView, type RunView } from "./view.js";

export type { FlowStep, StageRow } from "./contract.js";
export { DISABLED } from "./view.js";

export interface ReportData {
  generatedAt: string;
  dataDir: string;
  stages: StageRow[];
  /** the stages' steps in the flow chart, in registry order */
  flow: FlowStep[];
  /** dialogue stages switched off in the config */
  disabled: string[];
  /** what the stages' report parts read the run through */
  view: RunView;
}

export interface CollectOptions {
  /** the stages, each with its summary schema and report parts (the list the CLI hands down) */
  registry: StageRegistry<ReportingStage>;
  /** the state of each stage as the runner judges it (stale, running); default: each manifest's own */
  states?: Record<string, { state: string; reason?: string | undefined }>;
  now?: Date;
  /** dialogue stages the config switches off: shown as "not run (disabled)", never as 0 or missing */
  disabled?: readonly string[];
  /**
   * each stage's manifest as the runner reads it (Runner.manifestOf: a sharded stage's shards summed,
   * with the whole stage's summary); default: `<stage>/manifest.json`, which a sharded stage has not
   */
  manifests?: ReadonlyMap<string, Manifest | undefined>;
}

export function collectReport(dataDir: string, options: CollectOptions): ReportData {
  const { registry } = options;
  const manifests =
    options.manifests ??
    new Map(registry.names.map((name) => [name, readManifest(path.join(dataDir, name))]));

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
    const judged = options.states?.[name];
    if (disabled.includes(name)) return { name, state: DISABLED };
    return {
      name,
      state: judged?.state ?? m?.state ?? "not run",
      reason: judged?.reason,
      counts: m?.counts,
      usage: m?.usage,
      elapsedMs: m?.elapsedMs,
      finishedAt: m?.finishedAt,
    };
  });
  const view = makeView({
    registry,
    stages,
    disabled: registry.dialogueStages.filter((s) => disabled.includes(s)),
    rawSummary: (name) => manifests.get(name)?.stats,
  });

  const flow = registry.stages.flatMap((stage) =>
    (stage.report?.flow?.(view.forStage(stage)) ?? []).map(
      (step): FlowStep => ({
        label: step.label,
        stage: stage.name,
        records: view.ran(stage.name) ? step.records : undefined,
      }),
    ),
  );
  return {
    generatedAt: (options.now ?? new Date()).toISOString(),
    dataDir: path.resolve(dataDir),
    stages,
    flow,
    disabled: [...view.disabled],
    view,
  };
}
