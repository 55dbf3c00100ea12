// The filter stage's context as the runner would hand it to `filterRecord`, built by hand: the LLM
// benchmarks time the stage's own code without the runner, its scorer through `service`.
import type { LlmConfig } from "../../pipeline/llm/config.js";
import type { LlmService } from "../../pipeline/llm/index.js";
import { silentLogger } from "../../pipeline/log.js";
import type { StageContext } from "../../pipeline/stage.js";
import { UsageMeter } from "../../pipeline/usage.js";
import type { FilterConfig } from "../../stages/filter/config.js";

/** A context with what filter reads: its config, `llm` as the root config's, the service's roles, a fresh meter. */
export function filterContext(
  llm: LlmConfig,
  service: LlmService,
  config: FilterConfig,
  dataDir: string,
): StageContext<FilterConfig> {
  return {
    name: "filter",
    config,
    root: { llm } as unknown as StageContext<FilterConfig>["root"],
    dataDir,
    workDir: dataDir,
    limit: undefined,
    signal: new AbortController().signal,
    log: silentLogger,
    services: { llm: (role: string, meter: UsageMeter) => service.client(role, meter) },
    usage: new UsageMeter(),
  } as unknown as StageContext<FilterConfig>;
}
