// A role whose servers answered, then all fail for `outage_s`: with `on_outage: wait` requests stop
// spending their retries and are answered once the server is back, none failed; with `stop` the run
// stops with exit 3. A failure shorter than `outage_s` fails a record after its retries, as before.
import { describe, expect, it, vi } from "vitest";
import { UserError } from "../../pipeline/errors.js";
import { LlmOutageError, LlmRequestError } from "../../pipeline/llm/errors.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { ask, recordingLogger, serverPerTest, testConfig, testService } from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /./, reply: "hi there" }] });

// outage_s is shorter than any backoff (backoff_s 0.01: at least 5 ms): a request's second attempt
// always comes after the outage began
describe("LLM client: an outage after the server answered", () => {
  it("on_outage wait: no request fails; all are answered once the server is back", async () => {
    const log = recordingLogger();
    const config = testConfig(t.server.url, { retries: 1, outage_s: 0.001, on_outage: "wait" });
    const service = testService(config, t.dir, { log });
    const client = service.client("scorer", new UsageMeter());
    expect((await client.chat(ask("warm up"))).content).toBe("hi there");
    // down for 40 requests (far more than 4 requests' retries), then back
    let down = 0;
    t.server.options.fault = () => (down++ < 40 ? { type: "status", status: 503 } : undefined);
    const answers = await Promise.all(["a", "b", "c", "d"].map((q) => client.chat(ask(q))));
    expect(answers.map((a) => a.content)).toEqual(Array(4).fill("hi there"));
    expect(down).toBeGreaterThan(40);
    await service.close();
    const said = log.lines.join("\n");
    expect(said).toMatch(new RegExp(`waiting for ${t.server.url} since \\d\\d:\\d\\d`));
    expect(said).toContain("answers again");
  });

  it("on_outage wait: a request that waited out an outage has its retries again once the server is back", async () => {
    const log = recordingLogger();
    // outage_s long enough that "first"'s three quick attempts fall inside it on a slow machine
    const config = testConfig(t.server.url, { retries: 2, outage_s: 2, on_outage: "wait" });
    const service = testService(config, t.dir, { log });
    const client = service.client("scorer", new UsageMeter());
    await client.chat(ask("warm up"));
    let back = false;
    let failsOnceBack = 1;
    t.server.options.fault = (request) => {
      const text = request.body.messages[0]!.content;
      if (text === "b" || (back && text === "a" && failsOnceBack-- <= 0)) return undefined;
      return { type: "status", status: 503 };
    };
    await expect(client.chat(ask("first"))).rejects.toBeInstanceOf(LlmRequestError);
    // past outage_s since the first failure: "a" waits from its first attempt on
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const a = client.chat(ask("a"));
    const triesOfA = () => t.server.requests.filter((r) => r.body.messages[0]!.content === "a").length;
    await vi.waitFor(() => expect(triesOfA()).toBeGreaterThanOrEqual(6), { timeout: 20_000, interval: 10 });
    // the server answers again; then "a" fails once more, which one of its retries covers
    expect((await client.chat(ask("b"))).content).toBe("hi there");
    back = true;
    expect((await a).content).toBe("hi there");
    expect(failsOnceBack).toBeLessThan(0);
    await service.close();
    expect(log.lines.join("\n")).toContain("answers again");
  });

  it("on_outage stop: the run stops with exit 3 naming the role and the server", async () => {
    const config = testConfig(t.server.url, { retries: 1, outage_s: 0.001, on_outage: "stop" });
    const service = testService(config, t.dir);
    const client = service.client("scorer", new UsageMeter());
    await client.chat(ask("warm up"));
    t.server.options.fault = () => ({ type: "status", status: 503 });
    const errors = await Promise.all(
      ["a", "b", "c"].map((q) => client.chat(ask(q)).catch((e: unknown) => e)),
    );
    const stopped = errors.filter((e) => e instanceof LlmOutageError);
    expect(stopped.length).toBeGreaterThan(0);
    const error = stopped[0] as LlmOutageError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain(`llm role 'scorer': every server (${t.server.url}) has failed since`);
    expect(error.message).toContain("on_outage");
    // nothing more is sent
    const count = t.server.count;
    await expect(client.chat(ask("later"))).rejects.toBe(error);
    expect(t.server.count).toBe(count);
    await service.close();
  });

  it("a failure shorter than outage_s fails the record after its retries, as before", async () => {
    const config = testConfig(t.server.url, { retries: 1, outage_s: 3600, on_outage: "stop" });
    const service = testService(config, t.dir);
    const client = service.client("scorer", new UsageMeter());
    await client.chat(ask("warm up"));
    t.server.options.fault = () => ({ type: "status", status: 503 });
    const error = await client.chat(ask("a")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).attempts).toBe(2);
    await service.close();
  });
});
