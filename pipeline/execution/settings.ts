// The settings of every run a stage asks of the sandbox: the limits of one run, and how often a
// sandbox that fails is asked again. Each stage's config spreads these fields where its users have
// always set them (simulate and correct under `execution:`, validate at its top level, leetcode under
// `validation:`), so no key moved; the meaning and the defaults are defined once, here.
import { z } from "zod";
import { operational } from "../hash.js";
import type { CallLimits } from "../sandbox/call.js";
import { serverPrograms } from "../sandbox/capacity.js";
import { defaultWorkers } from "../sandbox/config.js";

/** Tries of one run while the sandbox itself fails, and the first wait between them (doubled each time). */
export const DEFAULT_SANDBOX_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 250;

/** The limits of one run, and its tries. */
export const sandboxSettingsShape = {
  /** seconds a program may run (the sandbox's own maximum still applies) */
  run_timeout_s: z.number().positive().default(10),
  /** seconds a program may take to compile */
  compile_timeout_s: z.number().positive().default(30),
  /** MiB; unset: the sandbox's default */
  memory_mb: z.number().int().min(64).optional(),
  /** tries before a sandbox error fails the record (the next run retries it) */
  sandbox_attempts: operational(z.number().int().min(1).max(10).default(DEFAULT_SANDBOX_ATTEMPTS)),
};

/** What pipeline/execution needs of a stage's config (unset: the defaults); other keys are ignored. */
export type SandboxSettings = {
  [K in keyof typeof sandboxSettingsShape]?: z.output<(typeof sandboxSettingsShape)[K]>;
} & {
  /** default DEFAULT_BACKOFF_MS; a test sets 0 */
  backoff_ms?: number | undefined;
};

/** The per-request limits of the settings. */
export function limitsOf(settings: SandboxSettings, signal?: AbortSignal): CallLimits {
  const { run_timeout_s, compile_timeout_s, memory_mb } = settings;
  return { runTimeoutS: run_timeout_s, compileTimeoutS: compile_timeout_s, memoryMb: memory_mb, signal };
}

/**
 * Programs a stage runs at once (the gate across all its records): its own setting, else the
 * sandbox's `workers` in the root config, else twice the workers its servers said they run (once the
 * stage's `open` has asked: learnServerWorkers in sandbox/capacity.ts), else `fallback`: the cores.
 */
export function programsAtOnce(
  setting: number | undefined,
  root: { sandbox: { workers?: number | undefined } },
  fallback = defaultWorkers(),
): number {
  return setting ?? root.sandbox.workers ?? serverPrograms(root.sandbox) ?? fallback;
}
