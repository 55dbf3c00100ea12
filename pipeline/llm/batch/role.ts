// A role in batch mode, on the same path as online (cached-call.ts): the response cache first, then
// its misses go to the stage's batch rounds (rounds.ts) instead of the endpoint. Its answers cost the
// provider's batch price.
import type { UsageMeter } from "../../usage.js";
import type { CachedAnswer, ResponseCache } from "../cache.js";
import { RoleBackend, type UncachedCall } from "../cached-call.js";
import { costUsd, type Price, type RoleConfig } from "../config.js";
import type { ChatMessage, ChatOptions, ChatResult } from "../types.js";
import type { LlmBatches } from "./rounds.js";

export class BatchRole extends RoleBackend {
  private readonly rounds: LlmBatches;
  private readonly price: Price | undefined;
  private readonly discount: number;

  constructor(
    role: string,
    config: RoleConfig,
    deps: { cache: ResponseCache; noCache: boolean; price: Price | undefined; rounds: LlmBatches },
  ) {
    const discount = config.batch?.discount ?? 1;
    super({ role, model: config.model, sampling: config.sampling, ...deps, batchDiscount: discount });
    this.rounds = deps.rounds;
    this.price = deps.price;
    this.discount = discount;
  }

  override async chat(
    messages: readonly ChatMessage[],
    options: ChatOptions | undefined,
    usage: UsageMeter,
  ): Promise<ChatResult> {
    // counted while it waits, cached or not: a round goes out once every record in flight waits
    this.rounds.waiting++;
    try {
      return await super.chat(messages, options, usage);
    } finally {
      this.rounds.waiting--;
    }
  }

  protected async answer(call: UncachedCall): Promise<CachedAnswer> {
    const answer = await this.rounds.request(
      this.role,
      {
        id: call.key.toString("hex"),
        model: this.model,
        messages: call.messages,
        sampling: call.sampling,
        jsonSchema: call.options?.json_schema,
      },
      call.signal,
    );
    call.usage.add({
      requests: 1,
      promptTokens: answer.promptTokens,
      completionTokens: answer.completionTokens,
      costUsd: costUsd(this.price, answer.promptTokens, answer.completionTokens) * this.discount,
    });
    return answer;
  }

  close(): void {}
}
