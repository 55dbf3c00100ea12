// `stages.<name>.enabled: false` on a stage that may be switched off (a dialogue method, e.g. with no
// TACO at hand): the stage is not run and the stages after it go on without its records. The runner
// takes the key out before the stage's own schema sees it, so stages need not know about it.
import { ConfigError } from "../errors.js";

/** What a stage downstream records as a switched-off upstream's output hash (manifest.upstream). */
export const SWITCHED_OFF = "switched-off";

export interface Switch {
  enabled: boolean;
  /** the stage's section without `enabled` */
  section: unknown;
}

export function readSwitch(
  stage: { name: string; switchable?: boolean },
  section: unknown,
  source: string,
): Switch {
  if (!stage.switchable || typeof section !== "object" || section === null || !("enabled" in section)) {
    return { enabled: true, section };
  }
  const { enabled, ...rest } = section as { enabled: unknown };
  if (typeof enabled !== "boolean") {
    throw new ConfigError(
      `invalid configuration in ${source}: stages.${stage.name}.enabled must be true or false (false: do not run ${stage.name}; the stages after it go on without it)`,
    );
  }
  return { enabled, section: rest };
}

export function switchedOffReason(name: string): string {
  return `stages.${name}.enabled: false`;
}
