import { describe, expect, it } from "vitest";
import { NotConfiguredError } from "../../pipeline/errors.js";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { resolveEndpoint } from "../../pipeline/llm/endpoint.js";
import { createLlmService } from "../../pipeline/llm/index.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { tempDir } from "../support/temp-dir.js";
import { recordingLogger } from "./helpers.js";

describe("llm config and endpoints", () => {
  it("parses an empty section with the paper's roles", () => {
    const config = llmConfigSchema.parse({});
    expect(config.scorer.model).toBe("Qwen/Qwen-72B-Chat");
    expect(config.weak.model).toBe("gpt-3.5-turbo");
    expect(config.strong.model).toBe("gpt-4");
    expect(config.scorer.sampling.temperature).toBe(0);
    expect(config.cache.path).toBe("llm-cache.sqlite");
  });

  it("rejects unknown keys, so a typo does not silently fall back to a default", () => {
    expect(llmConfigSchema.safeParse({ scorer: { modle: "x" } }).success).toBe(false);
    expect(llmConfigSchema.safeParse({ scorer: { sampling: { temprature: 0 } } }).success).toBe(false);
  });

  it("says exactly how to configure a role that has no endpoint", () => {
    const config = llmConfigSchema.parse({});
    const error = (() => {
      try {
        resolveEndpoint(config, "scorer", {});
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(NotConfiguredError);
    const message = (error as Error).message;
    for (const advice of [
      "llm:",
      "scorer:",
      "base_url:",
      "OPENAI_BASE_URL",
      "OPENAI_API_KEY",
      "Qwen/Qwen-72B-Chat",
    ]) {
      expect(message).toContain(advice);
    }
  });

  it("takes the URL from the config first, then from the environment", () => {
    const fromEnv = resolveEndpoint(llmConfigSchema.parse({}), "scorer", {
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1/",
    });
    expect(fromEnv.baseUrl).toBe("http://127.0.0.1:9/v1");
    const fromYaml = resolveEndpoint(
      llmConfigSchema.parse({ scorer: { base_url: "http://localhost:1/v1" } }),
      "scorer",
      {
        OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      },
    );
    expect(fromYaml.baseUrl).toBe("http://localhost:1/v1");
  });

  it("needs a key for a remote server, not for one on this machine, and reads per-role key variables", () => {
    const remote = llmConfigSchema.parse({ strong: { base_url: "https://api.example.com/v1" } });
    expect(() => resolveEndpoint(remote, "strong", {})).toThrow(/OPENAI_API_KEY/);
    expect(resolveEndpoint(remote, "strong", { OPENAI_API_KEY: "k1" }).apiKey).toBe("k1");
    const perRole = llmConfigSchema.parse({
      strong: { base_url: "https://api.example.com/v1", api_key_env: "STRONG_KEY" },
    });
    expect(resolveEndpoint(perRole, "strong", { OPENAI_API_KEY: "k1", STRONG_KEY: "k2" }).apiKey).toBe("k2");
    expect(() => resolveEndpoint(perRole, "strong", { OPENAI_API_KEY: "k1" })).toThrow(/STRONG_KEY/);
    const open = llmConfigSchema.parse({
      strong: { base_url: "https://gpu.example.com/v1", api_key_required: false },
    });
    expect(resolveEndpoint(open, "strong", {}).apiKey).toBeUndefined();
    const local = llmConfigSchema.parse({ scorer: { base_url: "http://127.0.0.1:8000/v1" } });
    expect(resolveEndpoint(local, "scorer", {}).apiKey).toBeUndefined();
  });

  it("shows the base URL in messages without credentials or a query", () => {
    const config = llmConfigSchema.parse({
      scorer: {
        base_url: "https://user:pw-secret@llm.example.com/v1/?api-key=k-secret",
        api_key_required: false,
      },
    });
    const endpoint = resolveEndpoint(config, "scorer", {});
    expect(endpoint.shownUrl).toBe("https://llm.example.com/v1");
    expect(endpoint.baseUrl).toContain("k-secret");
  });

  it("refuses an unknown role and a base URL that is not a URL", () => {
    expect(() => resolveEndpoint(llmConfigSchema.parse({}), "judge", {})).toThrow(/scorer, weak, strong/);
    expect(() =>
      resolveEndpoint(llmConfigSchema.parse({}), "scorer", { OPENAI_BASE_URL: "localhost" }),
    ).toThrow(/not a URL/);
  });

  it("throws from client(), before anything is opened or sent", () => {
    const dir = tempDir();
    const service = createLlmService(llmConfigSchema.parse({ scorer: { provider: "openai" } }), {
      dataDir: dir,
      noCache: false,
      log: recordingLogger(),
      env: {},
    });
    expect(() => service.client("scorer", new UsageMeter())).toThrow(NotConfiguredError);
  });
});
