// What a launch runs: the stages to run, in pipeline order, each with its shard count and the
// stages of the same launch it must wait for. Record-wise stages split into shards; a global stage
// reads everything at once, so it is always one process.
import type { Stage } from "../stage.js";

/**
 * What planning reads of the runner (the CLI passes the runner itself): a service takes a small
 * interface rather than importing the runner above it.
 */
export interface StagePlanner {
  plan(targets: string[], options: { only?: boolean }): readonly Pick<Stage, "name" | "kind">[];
  status(name: string): { state: string };
  stage(name: string): Pick<Stage, "upstream">;
}

export interface LaunchStep {
  stage: string;
  kind: "record" | "global";
  /** processes (array tasks, job completions) of this stage: 1 for a global stage */
  shards: number;
  /** stages of this launch whose completion this one needs */
  after: string[];
}

export interface PlanOptions {
  /** launch only the named stages, not their incomplete upstream */
  only: boolean;
  shards: number;
}

/**
 * The named stages and, unless `only`, every upstream stage that is not complete for the current
 * configuration (as `run` would do). Complete stages are left out: on a cluster each costs a job.
 */
export function planLaunch(runner: StagePlanner, targets: string[], options: PlanOptions): LaunchStep[] {
  const named = new Set(targets);
  const stages = runner
    .plan(targets, { only: options.only })
    .filter((s) => named.has(s.name) || runner.status(s.name).state !== "complete");
  const inPlan = new Set(stages.map((s) => s.name));
  const waitsFor = (name: string, seen = new Set<string>()): string[] => {
    const found: string[] = [];
    for (const up of runner.stage(name).upstream) {
      if (seen.has(up)) continue;
      seen.add(up);
      // an upstream left out of the launch may itself wait for one that is in it (with --only)
      if (inPlan.has(up)) found.push(up);
      else found.push(...waitsFor(up, seen));
    }
    return found;
  };
  return stages.map((s) => ({
    stage: s.name,
    kind: s.kind,
    shards: s.kind === "record" ? options.shards : 1,
    after: waitsFor(s.name),
  }));
}

/** A tag for one launch, unique to the second, usable in a DNS label: 20261124-210355. */
export function launchStamp(now = new Date()): string {
  return now.toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
}
