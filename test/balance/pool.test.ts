// The balancing rules on their own, with a clock the test moves: least outstanding first, taking
// turns on ties, ejection after failures in a row, one trial request after the time out, doubling
// while trials fail, pauses of one endpoint only.
import { describe, expect, it } from "vitest";
import { balanceSchema } from "../../pipeline/balance/config.js";
import { EndpointPool } from "../../pipeline/balance/pool.js";
import { UsageMeter } from "../../pipeline/usage.js";

function pool(names: string[], options: { capacity?: number; eject_after?: number } = {}) {
  let now = 1_000_000;
  const log: string[] = [];
  const p = new EndpointPool(
    names.map((name) => ({ name, target: name })),
    {
      capacity: options.capacity ?? 8,
      balance: balanceSchema.parse({ eject_after: options.eject_after ?? 2, eject_s: 10, max_eject_s: 35 }),
      log: (m) => log.push(m),
      now: () => now,
    },
  );
  return {
    p,
    log,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe("endpoint pool", () => {
  it("sends each request to the endpoint with the fewest outstanding, taking turns on ties", () => {
    const { p } = pool(["a", "b", "c"]);
    const first = [p.tryAcquire()!, p.tryAcquire()!, p.tryAcquire()!];
    expect(first.map((l) => l.name).sort()).toEqual(["a", "b", "c"]);
    // b answers: it has the fewest outstanding, so it gets the next one
    first.find((l) => l.name === "b")!.end("answered");
    expect(p.tryAcquire()!.name).toBe("b");
    first.find((l) => l.name === "a")!.end("answered");
    first.find((l) => l.name === "c")!.end("answered");
    const next = [p.tryAcquire()!.name, p.tryAcquire()!.name];
    expect(next.sort()).toEqual(["a", "c"]);
  });

  it("never gives an endpoint more than its capacity, and says so by answering nothing", () => {
    const { p } = pool(["a", "b"], { capacity: 1 });
    const a = p.tryAcquire()!;
    const b = p.tryAcquire()!;
    expect(new Set([a.name, b.name])).toEqual(new Set(["a", "b"]));
    expect(p.tryAcquire()).toBeUndefined();
    b.end("answered");
    expect(p.tryAcquire()!.name).toBe(b.name);
  });

  it("prefers endpoints a request has not failed on, and falls back to them when none is left", () => {
    const { p } = pool(["a", "b"]);
    expect(p.tryAcquire(new Set(["a"]))!.name).toBe("b");
    expect(p.tryAcquire(new Set(["a"]))!.name).toBe("b");
    expect(p.tryAcquire(new Set(["a", "b"]))!.name).toBe("a");
  });

  it("ejects after failures in a row, probes once after the time out, doubles while probes fail, readmits on an answer", () => {
    const { p, log, advance } = pool(["good", "bad"], { eject_after: 2 });
    const usage = new UsageMeter();
    const failOnBad = () => {
      const lease = p.tryAcquire(new Set(["good"]), usage)!;
      expect(lease.name).toBe("bad");
      lease.end("failed");
    };
    failOnBad();
    // one failure is not enough; an answer in between resets the count
    const answered = p.tryAcquire(new Set(["good"]), usage)!;
    answered.end("answered");
    failOnBad();
    failOnBad();
    // out: every request goes to good, even one that would rather avoid it
    expect(p.tryAcquire(new Set(["good"]), usage)!.name).toBe("good");
    expect(log.at(-1)).toMatch(/endpoint bad taken out of rotation for 10 s \(2 requests in a row failed\)/);
    advance(9_999);
    expect(p.tryAcquire(new Set(["good"]))!.name).toBe("good");
    advance(1);
    // its time is over: one trial request, and nothing else while it is out
    const probe = p.tryAcquire(new Set(["good"]), usage)!;
    expect(probe.name).toBe("bad");
    expect(p.tryAcquire(new Set(["good"]))!.name).toBe("good");
    probe.end("failed");
    expect(log.at(-1)).toMatch(/bad taken out of rotation for 20 s \(its trial request failed\)/);
    advance(20_000);
    const second = p.tryAcquire(new Set(["good"]))!;
    expect(second.name).toBe("bad");
    second.end("failed");
    // doubled again, but capped at max_eject_s
    expect(log.at(-1)).toMatch(/for 35 s/);
    advance(35_000);
    const third = p.tryAcquire(new Set(["good"]))!;
    expect(third.name).toBe("bad");
    third.end("answered");
    expect(log.at(-1)).toMatch(/endpoint bad is back in rotation/);
    expect(p.tryAcquire(new Set(["good"]))!.name).toBe("bad");
    const stats = p.stats();
    expect(stats.bad!.ejections).toBe(3);
    expect(stats.bad!.failures).toBe(5);
    // the meter saw what went through it: the first ejection and the first probe
    expect(usage.totals.endpoints?.bad).toMatchObject({
      requests: 5,
      answered: 1,
      failures: 4,
      ejections: 2,
    });
  });

  it("never ejects a lone endpoint: its requests have nowhere else to go", () => {
    const { p, log } = pool(["only"], { eject_after: 1 });
    for (let i = 0; i < 5; i++) p.tryAcquire()!.end("failed");
    expect(p.tryAcquire()!.name).toBe("only");
    expect(p.stats().only!.ejections).toBe(0);
    expect(log).toEqual([]);
  });

  it("pauses only the endpoint that asked, for as long as it asked", () => {
    const { p, advance } = pool(["a", "b"]);
    const lease = p.tryAcquire()!;
    const other = lease.name === "a" ? "b" : "a";
    lease.end("paused", 5_000);
    for (let i = 0; i < 4; i++) expect(p.tryAcquire()!.name).toBe(other);
    advance(5_000);
    expect(p.tryAcquire()!.name).toBe(lease.name);
  });

  it("waits for a usable endpoint, and stops waiting when the caller gives up", async () => {
    const { p } = pool(["a"], { capacity: 1 });
    const held = p.tryAcquire()!;
    const waiting = p.acquire(undefined, undefined, undefined, () => new Error("gave up"));
    held.end("answered");
    expect((await waiting).name).toBe("a");
    const controller = new AbortController();
    const abandoned = p.acquire(undefined, undefined, controller.signal, () => new Error("gave up"));
    controller.abort();
    await expect(abandoned).rejects.toThrow("gave up");
  });
});

describe("endpoint pool waiting", () => {
  it("keeps one listener on a signal however many requests wait on it", async () => {
    const { p } = pool(["a"], { capacity: 1 });
    const held = p.tryAcquire()!;
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const waiting = Array.from({ length: 40 }, () =>
        p.acquire(undefined, undefined, controller.signal, () => new Error("gave up")),
      );
      held.end("answered");
      const first = await Promise.race(waiting);
      controller.abort();
      const settled = await Promise.allSettled(waiting);
      expect(settled.filter((s) => s.status === "rejected")).toHaveLength(39);
      expect(first.name).toBe("a");
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
