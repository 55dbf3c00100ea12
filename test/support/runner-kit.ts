// Builds a Runner over a temporary data dir and a YAML config written for the test.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../pipeline/config/load.js";
import { type Logger, silentLogger } from "../../pipeline/log.js";
import { Runner } from "../../pipeline/runner.js";
import { createServices, type Services } from "../../pipeline/services.js";
import type { Stage } from "../../pipeline/stage.js";

export const noServices: Services = {
  llm() {
    throw new Error("this test configures no LLM");
  },
  sandbox() {
    throw new Error("this test configures no sandbox");
  },
  async close() {},
};

/**
 * A runner of `stages` on `<dir>/config.yaml` (`data_dir: <dir>/data`, then `yaml`), its progress
 * unshown. `services`: none by default; `true`, the real services the config describes (its sandbox),
 * closed by the caller; or the test's own.
 */
export function makeRunner(
  stages: readonly Stage<unknown>[],
  options: {
    dir: string;
    yaml?: string;
    sets?: string[];
    limit?: number;
    services?: boolean | Services;
    /** default: silent */
    log?: Logger;
  },
): Runner {
  const file = join(options.dir, "config.yaml");
  writeFileSync(file, `data_dir: ${join(options.dir, "data")}\n${options.yaml ?? ""}`);
  const loaded = loadConfig({ file, sets: options.sets ?? [] });
  const { services = false } = options;
  return new Runner(stages, loaded, {
    services:
      services === true
        ? createServices(loaded.config, { dataDir: loaded.config.data_dir, log: silentLogger })
        : services || noServices,
    log: options.log ?? silentLogger,
    progressStream: { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream,
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
  });
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
