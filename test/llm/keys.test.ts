// API keys: sent as a bearer token to the endpoint and nowhere else, never in a log line, an error,
// or any file the client writes; a refused key stops everything at once.
import { describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { LlmAuthError, LlmRequestError } from "../../pipeline/llm/errors.js";
import { UsageMeter } from "../../pipeline/usage.js";
import {
  ask,
  fileCount,
  filesContaining,
  recordingLogger,
  serverPerTest,
  testConfig,
  testService,
} from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /hello/, reply: "hi there" }] });

describe("LLM client: keys", () => {
  it("stops at once on a 401, with advice and without the key anywhere", async () => {
    const secret = "sk-test-THIS-IS-SECRET-123456";
    t.server.options.requireKey = "sk-the-right-one";
    const log = recordingLogger();
    const config = testConfig(t.server.url, { api_key_env: "SCORER_KEY" });
    const service = testService(config, t.dir, { log, env: { SCORER_KEY: secret } });
    const client = service.client("scorer", new UsageMeter());
    const error = await client.chat(ask("hello")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmAuthError);
    expect(error).toBeInstanceOf(UserError);
    const message = (error as Error).message;
    expect(message).toContain("rejected the API key");
    expect(message).toContain("$SCORER_KEY");
    // The server quoted the key back; the message shows where it was instead.
    expect(message).not.toContain(secret);
    expect(message).toContain("[redacted]");
    expect(t.server.count).toBe(1);
    // Everything after it fails the same way without sending anything.
    await expect(client.chat(ask("something else"))).rejects.toBeInstanceOf(LlmAuthError);
    expect(t.server.count).toBe(1);
    await service.close();
    expect(log.lines.join("\n")).not.toContain(secret);
    expect(fileCount(t.dir)).toBeGreaterThan(0);
    expect(filesContaining(t.dir, secret)).toEqual([]);
  });

  it("stops at once on a 403 too, saying access was refused", async () => {
    t.server.options.fault = () => ({ type: "status", status: 403, message: "model not allowed" });
    const service = testService(testConfig(t.server.url), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const error = await client.chat(ask("hello")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmAuthError);
    expect((error as Error).message).toContain("refused access (403)");
    await expect(client.chat(ask("other"))).rejects.toBeInstanceOf(LlmAuthError);
    expect(t.server.count).toBe(1);
    await service.close();
  });

  it("sends the key as a bearer token and keeps it out of the cache file", async () => {
    const secret = "sk-test-another-secret-987";
    t.server.options.requireKey = secret;
    const service = testService(testConfig(t.server.url), t.dir, { env: { OPENAI_API_KEY: secret } });
    expect((await service.client("scorer", new UsageMeter()).chat(ask("hello"))).content).toBe("hi there");
    expect(t.server.requests[0]!.authorization).toBe(`Bearer ${secret}`);
    await service.close();
    expect(fileCount(t.dir)).toBeGreaterThan(0);
    expect(filesContaining(t.dir, secret)).toEqual([]);
  });

  it("takes the key from llm.<role>.api_key over the environment", async () => {
    const secret = "sk-from-the-config-file-42";
    t.server.options.requireKey = secret;
    const config = testConfig(t.server.url, { api_key: secret });
    const service = testService(config, t.dir, { env: { OPENAI_API_KEY: "sk-from-env" } });
    expect((await service.client("scorer", new UsageMeter()).chat(ask("hello"))).content).toBe("hi there");
    expect(t.server.requests[0]!.authorization).toBe(`Bearer ${secret}`);
    await service.close();
    expect(filesContaining(t.dir, secret)).toEqual([]);

    t.server.options.requireKey = "sk-another";
    const refused = testService(testConfig(t.server.url, { api_key: secret }), `${t.dir}/second`);
    const error = await refused
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain("Check the key in llm.scorer.api_key");
    expect((error as Error).message).not.toContain(secret);
    await refused.close();
  });

  it("redacts the key from any server text it quotes in an error", async () => {
    const secret = "sk-echoed-by-a-proxy-777";
    t.server.options.fault = () => ({ type: "status", status: 400, message: `bad request (key ${secret})` });
    const log = recordingLogger();
    const service = testService(testConfig(t.server.url), t.dir, {
      log,
      env: { OPENAI_API_KEY: secret },
    });
    const error = await service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as Error).message).toContain("bad request (key [redacted])");
    await service.close();
    expect(log.lines.join("\n")).not.toContain(secret);
  });
});
