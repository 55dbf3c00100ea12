// The list forms of `llm.<role>.base_url` and `sandbox.url`, and the balance keys.
import { describe, expect, it } from "vitest";
import { NotConfiguredError } from "../../pipeline/errors.js";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { resolveEndpoint } from "../../pipeline/llm/endpoint.js";
import { describeProvider } from "../../pipeline/llm/provider.js";
import { sandboxConfigSchema } from "../../pipeline/sandbox/config.js";

describe("endpoint lists in the config", () => {
  it("takes one URL or a list for an LLM role, with balance defaults", () => {
    const config = llmConfigSchema.parse({
      scorer: { base_url: ["http://127.0.0.1:8001/v1/", "http://user:pw@127.0.0.1:8002/v1?key=k"] },
    });
    expect(config.scorer.balance).toEqual({ eject_after: 3, eject_s: 5, max_eject_s: 300 });
    const endpoint = resolveEndpoint(config, "scorer", {});
    expect(endpoint.replicas.map((r) => r.shownUrl)).toEqual([
      "http://127.0.0.1:8001/v1",
      "http://127.0.0.1:8002/v1",
    ]);
    expect(endpoint.baseUrl).toBe("http://127.0.0.1:8001/v1");
    // what status prints: every replica, no credentials or query
    const line = describeProvider(config, "scorer", {}, "/tmp");
    expect(line).toContain("at http://127.0.0.1:8001/v1, http://127.0.0.1:8002/v1");
    expect(line).not.toContain("pw");
    expect(llmConfigSchema.safeParse({ scorer: { base_url: [] } }).success).toBe(false);
    expect(llmConfigSchema.safeParse({ scorer: { base_url: ["not a url"] } }).success).toBe(false);
    expect(llmConfigSchema.safeParse({ scorer: { balance: { eject_afterr: 2 } } }).success).toBe(false);
  });

  it("needs a key when any replica is elsewhere, and says which", () => {
    const config = llmConfigSchema.parse({
      scorer: { base_url: ["http://127.0.0.1:8001/v1", "https://llm.example.org/v1"] },
    });
    expect(() => resolveEndpoint(config, "scorer", {})).toThrow(NotConfiguredError);
    expect(() => resolveEndpoint(config, "scorer", {})).toThrow(/at https:\/\/llm\.example\.org/);
    expect(resolveEndpoint(config, "scorer", { OPENAI_API_KEY: "k" }).replicas).toHaveLength(2);
  });

  it("names the bad entry of a comma-separated variable", () => {
    const config = llmConfigSchema.parse({});
    expect(() =>
      resolveEndpoint(config, "scorer", { OPENAI_BASE_URL: "http://127.0.0.1:1/v1,nonsense" }),
    ).toThrow(/not a URL: 'nonsense'.*several replicas/);
  });

  it("takes one sandbox URL or a list", () => {
    expect(sandboxConfigSchema.parse({ url: "http://127.0.0.1:8080" }).url).toBe("http://127.0.0.1:8080");
    const listed = sandboxConfigSchema.parse({
      url: ["http://a:8080", "http://b:8080"],
      balance: { eject_s: 1 },
    });
    expect(listed.url).toEqual(["http://a:8080", "http://b:8080"]);
    expect(listed.balance).toEqual({ eject_after: 3, eject_s: 1, max_eject_s: 300 });
    expect(sandboxConfigSchema.safeParse({ url: [] }).success).toBe(false);
  });
});
