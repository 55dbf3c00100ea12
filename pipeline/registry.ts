// What the framework may know of the stages: only what the stage list it is handed says of itself.
// The runner gives it to every stage as `ctx.registry`. A dialogue method is declared by the stage
// that makes it (`methods`, possibly from the config: one per audited dataset), so a new one is its
// stage, its config and its prompt, with no edit under pipeline/ (test/registry/toy-method.test.ts).
import type { RootConfig } from "./config/schema.js";
import type { DialogueMethod } from "./dialogue.js";
import { ConfigError } from "./errors.js";

/** A stage's methods: fixed, or what the run's config makes of them (none without a config). */
export type DeclaredMethods = readonly DialogueMethod[] | ((root: RootConfig) => readonly DialogueMethod[]);

/** The part of a stage definition the registry reads (pipeline/stage.ts). */
export interface RegisteredStage {
  name: string;
  /** the dialogue methods the stage makes, declared; a stage that declares them is a dialogue stage */
  methods?: DeclaredMethods | undefined;
  /** declared by the one stage whose directory holds the release (and the report) */
  release?: object | undefined;
}

export class StageRegistry<T extends RegisteredStage = RegisteredStage> {
  /** every stage definition, in pipeline order */
  readonly stages: readonly T[];
  /** every stage, in pipeline order */
  readonly names: readonly string[];
  /** the stages that make dialogues, in pipeline order (the order their dialogues reach validation) */
  readonly dialogueStages: readonly string[];
  /** every declared dialogue method, in pipeline order */
  readonly methods: readonly DialogueMethod[];
  private readonly methodsByStage = new Map<string, readonly DialogueMethod[]>();

  /** `root`: the run's config, which the stages that declare their methods from it read */
  constructor(stages: readonly T[], root?: RootConfig) {
    this.stages = stages;
    this.names = stages.map((s) => s.name);
    const releases = stages.filter((s) => s.release);
    if (releases.length > 1) {
      throw new Error(
        `stages ${releases.map((s) => s.name).join(" and ")} both declare a release; one stage makes it`,
      );
    }
    const makers = new Map<string, { stage: string; method: DialogueMethod }>();
    // a clash with a method the config declares is the config's to fix, not a bug
    const configured = new Set<DialogueMethod>();
    const clash = (message: string, ...methods: DialogueMethod[]) =>
      methods.some((m) => configured.has(m))
        ? new ConfigError(
            `${message}: rename the audited source (its \`name\`; \`pnpm pipeline audit --name\` for an audit's)`,
          )
        : new Error(message);
    for (const stage of stages) {
      const declared =
        typeof stage.methods === "function" ? (root ? stage.methods(root) : []) : stage.methods;
      if (typeof stage.methods === "function") for (const m of declared ?? []) configured.add(m);
      // a stage declaring from the config is a dialogue stage even where this config gives it none
      if (!declared?.length && typeof stage.methods !== "function") continue;
      this.methodsByStage.set(stage.name, declared ?? []);
      for (const method of declared ?? []) {
        const other = makers.get(method.name);
        if (other !== undefined) {
          throw clash(
            `stages ${other.stage} and ${stage.name} both declare the dialogue method ${method.name}; each method has one stage that makes it`,
            other.method,
            method,
          );
        }
        makers.set(method.name, { stage: stage.name, method });
      }
    }
    this.dialogueStages = [...this.methodsByStage.keys()];
    this.methods = [...this.methodsByStage.values()].flat();
    for (const [i, method] of this.methods.entries()) {
      const twin = this.methods.find((m, j) => j < i && m.prefix === method.prefix);
      if (twin)
        throw clash(
          `dialogue methods ${twin.name} and ${method.name} both declare the id prefix ${method.prefix}; each needs its own`,
          twin,
          method,
        );
    }
  }

  /** The definition of the stage named `name`, if registered. */
  stage(name: string): T | undefined {
    return this.stages.find((s) => s.name === name);
  }

  /** The stage whose directory holds the release (`push` uploads it, the report is written there). */
  releaseStage(): T | undefined {
    return this.stages.find((s) => s.release);
  }

  /** The methods a stage makes; none for a stage that makes no dialogue (or is not registered). */
  methodsOf(stage: string): readonly DialogueMethod[] {
    return this.methodsByStage.get(stage) ?? [];
  }

  /** The methods of the given stages, in the order given. */
  methodsOfStages(stages: readonly string[]): DialogueMethod[] {
    return stages.flatMap((s) => this.methodsOf(s));
  }

  /** The dialogue stages a config switches off (`stages.<stage>.enabled: false`). */
  disabledDialogueStages(stagesConfig: Readonly<Record<string, unknown>> | undefined): string[] {
    return this.dialogueStages.filter((name) => {
      const section = stagesConfig?.[name];
      return (
        typeof section === "object" &&
        section !== null &&
        (section as { enabled?: unknown }).enabled === false
      );
    });
  }
}
