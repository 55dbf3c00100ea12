// A role whose servers never answer (nothing listens, or every attempt times out) stops the run
// after its probe with advice, spending no record's retries; one that answered once fails records as
// before, and a role with a live replica among dead ones keeps working.
import { describe, expect, it } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { LlmRequestError, LlmUnreachableError } from "../../pipeline/llm/errors.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { startLlmServer } from "../support/llm-server.js";
import { blackHole, freePort } from "../support/ports.js";
import { ask, recordingLogger, serverPerTest, testConfig, testService } from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /./, reply: "hi there" }] });

const deadUrl = async () => `http://127.0.0.1:${await freePort()}/v1`;

describe("LLM client: a server that never answers", () => {
  it("stops with exit 3 naming the role, the URL and what to check, after more attempts than retries", async () => {
    const url = await deadUrl();
    // retries: 0 would fail the record at once; the probe tries on instead
    const service = testService(testConfig(url, { retries: 0, probe_s: 0.3 }), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const errors = await Promise.all(
      ["a", "b", "c"].map((q) => client.chat(ask(q)).catch((e: unknown) => e)),
    );
    for (const error of errors) expect(error).toBeInstanceOf(LlmUnreachableError);
    const error = errors[0] as LlmUnreachableError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain("llm role 'scorer'");
    expect(error.message).toContain(url);
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.message).toContain("llm.scorer.base_url");
    expect(error.message).toContain("/v1");
    expect(Number(/\((\d+) attempts/.exec(error.message)![1])).toBeGreaterThan(3);
    // nothing more is tried
    await expect(client.chat(ask("d"))).rejects.toBe(error);
    await service.close();
  });

  it("counts a timeout on every attempt as no answer", async () => {
    t.server.options.fault = () => ({ type: "hang" });
    const service = testService(testConfig(t.server.url, { timeout_s: 0.1, probe_s: 0.3 }), t.dir);
    const error = await service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmUnreachableError);
    expect((error as Error).message).toContain("timeout");
    await service.close();
  });

  it("stops after its probe at a server that accepts connections and never answers, not after timeout_s", async () => {
    const hole = await blackHole();
    try {
      // the test's own limit is far below timeout_s: waiting out an attempt's timeout fails it
      const config = testConfig(`${hole.url}/v1`, { timeout_s: 3600, probe_s: 0.5 });
      const service = testService(config, t.dir);
      const client = service.client("scorer", new UsageMeter());
      const errors = await Promise.all(["a", "b"].map((q) => client.chat(ask(q)).catch((e: unknown) => e)));
      for (const error of errors) expect(error).toBeInstanceOf(LlmUnreachableError);
      expect((errors[0] as Error).message).toContain(`${hole.url}/v1`);
      expect((errors[0] as Error).message).toContain("accepts connections but sent no answer");
      await service.close();
    } finally {
      await hole.close();
    }
  }, 120_000);

  it("waits for a slow server's first answer past probe_s: it answers HTTP, so it is alive", async () => {
    t.server.options.latencyMs = 1500;
    const service = testService(testConfig(t.server.url, { timeout_s: 60, probe_s: 0.2 }), t.dir);
    expect((await service.client("scorer", new UsageMeter()).chat(ask("hello"))).content).toBe("hi there");
    await service.close();
  });

  it("fails only the record once the server has answered, as before", async () => {
    const service = testService(
      testConfig(t.server.url, { timeout_s: 0.1, probe_s: 0.05, retries: 2 }),
      t.dir,
    );
    const client = service.client("scorer", new UsageMeter());
    expect((await client.chat(ask("warm up"))).content).toBe("hi there");
    t.server.options.fault = () => ({ type: "hang" });
    const error = await client.chat(ask("hello")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).attempts).toBe(3);
    await service.close();
  });

  it("a server that answers 500 to everything has answered: its records fail after their retries", async () => {
    t.server.options.fault = () => ({ type: "status", status: 500 });
    const service = testService(testConfig(t.server.url, { retries: 1, probe_s: 0.05 }), t.dir);
    const error = await service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect(t.server.count).toBe(2);
    await service.close();
  });

  it("with several replicas, stops only when every one is dead, and names them all", async () => {
    const [a, b] = [await deadUrl(), await deadUrl()];
    const service = testService(
      testConfig(undefined, { base_url: [a, b], probe_s: 0.3, balance: { eject_s: 0.05 } }),
      t.dir,
    );
    const error = await service
      .client("scorer", new UsageMeter())
      .chat(ask("hello"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmUnreachableError);
    expect((error as Error).message).toContain(`${a}, ${b}`);
    await service.close();
  });

  it("with a live replica among dead ones, every request is answered and the dead one ejected", async () => {
    const live = await startLlmServer({ rules: [{ match: /./, reply: "alive" }] });
    try {
      const log = recordingLogger();
      const config = testConfig(undefined, {
        base_url: [await deadUrl(), live.url],
        probe_s: 0.05,
        balance: { eject_after: 1, eject_s: 60 },
      });
      const service = testService(config, t.dir, { log });
      const client = service.client("scorer", new UsageMeter());
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => client.chat(ask(`q ${i}`)).then((r) => r.content)),
      );
      expect(answers).toEqual(Array(8).fill("alive"));
      await service.close();
      expect(log.lines.join("\n")).toContain("taken out of rotation");
    } finally {
      await live.close();
    }
  });
});
