import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { backoffMs, retryAfterMs } from "../../pipeline/llm/backoff.js";
import { MinuteBudget } from "../../pipeline/llm/budget.js";
import { LlmAbortedError } from "../../pipeline/llm/errors.js";

describe("MinuteBudget", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const settled = async (promises: Promise<void>[]) => {
    const done: boolean[] = promises.map(() => false);
    for (const [i, p] of promises.entries()) {
      p.then(
        () => {
          done[i] = true;
        },
        () => {},
      );
    }
    await vi.advanceTimersByTimeAsync(0);
    return done;
  };

  it("lets a minute's budget through at once, then one more per refill interval", async () => {
    const budget = new MinuteBudget(60, { role: "scorer", now: () => Date.now() });
    const takes = Array.from({ length: 62 }, () => budget.take(1));
    let done = await settled(takes);
    expect(done.filter(Boolean)).toHaveLength(60);
    await vi.advanceTimersByTimeAsync(1000);
    done = await settled(takes);
    expect(done.filter(Boolean)).toHaveLength(61);
    await vi.advanceTimersByTimeAsync(1000);
    done = await settled(takes);
    expect(done.every(Boolean)).toBe(true);
  });

  it("serves waiters first come first served, so a big request is not starved", async () => {
    const budget = new MinuteBudget(600, { role: "scorer", now: () => Date.now() });
    await budget.take(600);
    const order: string[] = [];
    const big = budget.take(300).then(() => order.push("big"));
    const small = budget.take(1).then(() => order.push("small"));
    await vi.advanceTimersByTimeAsync(29_000);
    expect(order).toEqual([]);
    await vi.advanceTimersByTimeAsync(2_000);
    await Promise.all([big, small]);
    expect(order).toEqual(["big", "small"]);
  });

  it("charges the correction when the real token count is known", async () => {
    const budget = new MinuteBudget(100, { role: "scorer", now: () => Date.now() });
    await budget.take(50);
    budget.adjust(-50); // the answer was 50 tokens longer than reserved
    const next = budget.take(10);
    expect((await settled([next]))[0]).toBe(false);
    await vi.advanceTimersByTimeAsync(6_000);
    expect((await settled([next]))[0]).toBe(true);
  });

  it("lets a request larger than the whole budget go once the bucket is full", async () => {
    const budget = new MinuteBudget(100, { role: "scorer", now: () => Date.now() });
    expect((await settled([budget.take(5000)]))[0]).toBe(true);
  });

  it("gives up waiting when aborted", async () => {
    const budget = new MinuteBudget(1, { role: "scorer", now: () => Date.now() });
    await budget.take(1);
    const controller = new AbortController();
    const waiting = budget.take(1, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(LlmAbortedError);
  });
});

describe("backoff", () => {
  const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null });

  it("reads Retry-After in seconds, as a date, and retry-after-ms", () => {
    expect(retryAfterMs(headers({ "retry-after": "3" }))).toBe(3000);
    expect(retryAfterMs(headers({ "retry-after-ms": "250", "retry-after": "3" }))).toBe(250);
    const inTen = new Date(Date.now() + 10_000).toUTCString();
    const fromDate = retryAfterMs(headers({ "retry-after": inTen }))!;
    expect(fromDate).toBeGreaterThan(8_000);
    expect(fromDate).toBeLessThanOrEqual(10_000);
    expect(retryAfterMs(headers({}))).toBeUndefined();
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeUndefined();
  });

  it("waits at least what the server asked for", () => {
    for (const r of [0, 0.5, 0.999]) {
      const wait = backoffMs(1, { baseMs: 1000, maxMs: 60_000, retryAfterMs: 20_000 }, () => r);
      expect(wait).toBeGreaterThanOrEqual(20_000);
      expect(wait).toBeLessThan(21_000);
    }
  });

  it("doubles with each attempt up to the maximum, with jitter in the upper half", () => {
    const at = (attempt: number, r: number) => backoffMs(attempt, { baseMs: 1000, maxMs: 8000 }, () => r);
    expect(at(1, 0)).toBe(500);
    expect(at(1, 1)).toBe(1000);
    expect(at(2, 1)).toBe(2000);
    expect(at(3, 1)).toBe(4000);
    expect(at(4, 1)).toBe(8000);
    expect(at(9, 1)).toBe(8000);
    expect(at(9, 0)).toBe(4000);
  });
});
