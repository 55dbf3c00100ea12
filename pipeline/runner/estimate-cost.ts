// The cost part of a dry-run's estimate. A model with no price under `llm.prices` costs 0 in the sums,
// and "~$0.00" read as "free": the estimate says "price unknown" instead, naming the role and model.
import type { LlmEstimator } from "../llm/types.js";
import type { Services } from "../services.js";
import type { CostEstimate } from "../stage.js";

/** `services` whose estimators note each role the stage asked for that has no price. */
export function watchPrices(services: Services): { services: Services; unpriced: Set<string> } {
  const unpriced = new Set<string>();
  const inner = services.llmEstimator;
  if (!inner) return { services, unpriced };
  // the services object may rely on `this`; everything else stays as it was
  const watched: Services = Object.assign(Object.create(services) as Services, {
    llmEstimator(role: string): LlmEstimator {
      const estimator = inner.call(services, role);
      if (estimator.priced === false) unpriced.add(`${role} (${estimator.model})`);
      return estimator;
    },
  });
  return { services: watched, unpriced };
}

export function costText(estimate: CostEstimate, unpriced: ReadonlySet<string>): string {
  if (estimate.costUsd === undefined) return "";
  if (unpriced.size === 0 || estimate.requests === 0) return `, ~$${estimate.costUsd.toFixed(2)}`;
  const roles = [...unpriced].join(", ");
  return estimate.costUsd > 0
    ? `, ~$${estimate.costUsd.toFixed(2)} plus what ${roles} costs (price unknown: add it under llm.prices)`
    : `, price unknown (no llm.prices entry for ${roles})`;
}
