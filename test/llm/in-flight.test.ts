// Identical requests in flight at once: sent once, and each caller may give up on its own without
// failing the others.
import { describe, expect, it } from "vitest";
import { LlmAbortedError } from "../../pipeline/llm/errors.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { failFirst } from "../support/llm-server.js";
import { ask, serverPerTest, testConfig, testService } from "./helpers.js";

const t = serverPerTest({ rules: [{ match: /hello/, reply: "hi there" }] });

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 2));
};

/** Settles to "answered: <content>", "aborted" or the error's name, so outcomes compare as data. */
const outcome = (p: Promise<{ content: string }>) =>
  p.then(
    (r) => `answered: ${r.content}`,
    (e: unknown) => (e instanceof LlmAbortedError ? "aborted" : (e as Error).name),
  );

describe("LLM client: identical requests in flight", () => {
  it("sends them once; the others count as cached", async () => {
    t.server.options.latencyMs = 30;
    const service = testService(testConfig(t.server.url), t.dir);
    const usage = new UsageMeter();
    const client = service.client("scorer", usage);
    const answers = await Promise.all([1, 2, 3].map(() => client.chat(ask("hello"))));
    expect(answers.map((a) => a.content)).toEqual(["hi there", "hi there", "hi there"]);
    expect(answers.map((a) => a.cached)).toEqual([false, true, true]);
    expect(t.server.count).toBe(1);
    expect(usage.totals).toMatchObject({ requests: 1, cachedRequests: 2 });
    await service.close();
  });

  it("lets the first caller give up without failing a caller that joined it", async () => {
    // The first attempt fails and is retried after a backoff: the first caller aborts meanwhile.
    t.server.options.fault = failFirst(1, { type: "status", status: 500 });
    const service = testService(testConfig(t.server.url, { backoff_s: 0.2, max_backoff_s: 0.2 }), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const first = new AbortController();
    const second = new AbortController();
    const a = outcome(client.chat(ask("hello"), { signal: first.signal }));
    const b = outcome(client.chat(ask("hello"), { signal: second.signal }));
    await until(() => t.server.count >= 1);
    first.abort();
    expect(await a).toBe("aborted");
    expect(await b).toBe("answered: hi there");
    expect(t.server.count).toBe(2);
    await service.close();
  });

  it("lets a caller that joined give up alone, and the first one still gets its answer", async () => {
    t.server.options.latencyMs = 150;
    const service = testService(testConfig(t.server.url), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const joined = new AbortController();
    const a = outcome(client.chat(ask("hello"), { signal: new AbortController().signal }));
    const b = outcome(client.chat(ask("hello"), { signal: joined.signal }));
    await until(() => t.server.count >= 1);
    joined.abort();
    expect(await b).toBe("aborted");
    expect(await a).toBe("answered: hi there");
    expect(t.server.count).toBe(1);
    await service.close();
  });

  it("stops waiting to retry once every caller has given up, and a later call starts afresh", async () => {
    t.server.options.fault = failFirst(1, { type: "status", status: 500 });
    const service = testService(testConfig(t.server.url, { backoff_s: 3600, max_backoff_s: 3600 }), t.dir);
    const client = service.client("scorer", new UsageMeter());
    const callers = [new AbortController(), new AbortController()];
    const pending = callers.map((c) => outcome(client.chat(ask("hello"), { signal: c.signal })));
    await until(() => t.server.count >= 1);
    for (const c of callers) c.abort();
    expect(await Promise.all(pending)).toEqual(["aborted", "aborted"]);
    expect(t.server.count).toBe(1);
    // Not stuck behind the abandoned hour of backoff: a new call sends at once and is answered.
    expect(await outcome(client.chat(ask("hello")))).toBe("answered: hi there");
    expect(t.server.count).toBe(2);
    await service.close();
  });

  it("waits on one stage signal with dozens of calls, without Node's listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const service = testService(testConfig(t.server.url, { concurrency: 50 }), t.dir);
      const client = service.client("scorer", new UsageMeter());
      const stage = new AbortController();
      const calls = Array.from({ length: 50 }, (_, i) => client.chat(ask(`q${i}`), { signal: stage.signal }));
      expect((await Promise.all(calls)).length).toBe(50);
      await service.close();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });
});
