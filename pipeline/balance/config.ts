// How requests are spread over several replicas of one service (LLM servers of a role, /run_code
// servers): the keys shared by `llm.<role>.balance` and `sandbox.balance`.
import { z } from "zod";

export const balanceSchema = z
  .object({
    /** failures in a row (connection errors, 5xx, timeouts) that take an endpoint out of rotation */
    eject_after: z.number().int().min(1).max(1000).default(3),
    /** seconds out of rotation the first time; doubles each time its trial request fails */
    eject_s: z.number().positive().default(5),
    /** the longest an endpoint stays out before its next trial request, seconds */
    max_eject_s: z.number().positive().default(300),
  })
  .strict();
export type BalanceConfig = z.infer<typeof balanceSchema>;

/** A URL setting that may name one server or a list of replicas, as a list. */
export function urlList(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return (typeof value === "string" ? [value] : [...value]).map((url) => url.trim()).filter(Boolean);
}
