// What the framework may know of the stages: only what the stage list it is handed says of itself.
// The CLI hands down stages/index.ts's list (tests their own); the runner gives it to every stage as
// `ctx.registry`, and the report takes it as an option. A dialogue method is declared by the stage
// that makes it (`methods`), so a new one is its stage, its config and its prompt, with no edit under
// pipeline/ (test/registry/toy-method.test.ts adds one from test/).
import type { DialogueMethod } from "./dialogue.js";

/** The part of a stage definition the registry reads (pipeline/stage.ts). */
export interface RegisteredStage {
  name: string;
  /** the dialogue methods the stage makes, declared; a stage that declares them is a dialogue stage */
  methods?: readonly DialogueMethod[] | undefined;
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

  constructor(stages: readonly T[]) {
    this.stages = stages;
    this.names = stages.map((s) => s.name);
    const releases = stages.filter((s) => s.release);
    if (releases.length > 1) {
      throw new Error(
        `stages ${releases.map((s) => s.name).join(" and ")} both declare a release; one stage makes it`,
      );
    }
    const makers = new Map<string, string>();
    for (const stage of stages) {
      if (!stage.methods?.length) continue;
      this.methodsByStage.set(stage.name, stage.methods);
      for (const method of stage.methods) {
        const other = makers.get(method.name);
        if (other !== undefined) {
          throw new Error(
            `stages ${other} and ${stage.name} both declare the dialogue method ${method.name}; each method has one stage that makes it`,
          );
        }
        makers.set(method.name, stage.name);
      }
    }
    this.dialogueStages = [...this.methodsByStage.keys()];
    this.methods = [...this.methodsByStage.values()].flat();
    for (const [i, method] of this.methods.entries()) {
      const twin = this.methods.find((m, j) => j < i && m.prefix === method.prefix);
      if (twin)
        throw new Error(
          `dialogue methods ${twin.name} and ${method.name} both declare the id prefix ${method.prefix}; each needs its own`,
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
