// Usage per endpoint as a stage's manifest keeps it: carried over a resumed run, summed over shards,
// and shown by `status`.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { printEndpointUsage } from "../../pipeline/cli/status-view.js";
import type { StageStatus } from "../../pipeline/runner.js";
import {
  describeEndpoints,
  describeSandbox,
  sumSandbox,
  sumUsage,
  UsageMeter,
} from "../../pipeline/usage.js";

const A = "http://10.0.0.1:8000/v1";
const B = "http://10.0.0.2:8000/v1";

describe("usage per endpoint", () => {
  it("carries on from the previous run's manifest without changing it", () => {
    const first = new UsageMeter();
    first.add({ requests: 2 });
    first.endpoint(A, { requests: 2, answered: 2, latencyMs: 300 });
    const saved = JSON.parse(JSON.stringify(first.totals));
    const resumed = new UsageMeter(saved);
    resumed.endpoint(A, { requests: 1, failures: 1 });
    resumed.endpoint(B, { requests: 1, answered: 1, latencyMs: 50 });
    expect(saved.endpoints[A].requests).toBe(2);
    expect(resumed.totals.endpoints).toEqual({
      [A]: { requests: 3, answered: 2, failures: 1, ejections: 0, latencyMs: 300 },
      [B]: { requests: 1, answered: 1, failures: 0, ejections: 0, latencyMs: 50 },
    });
    expect(resumed.totals.requests).toBe(2);
  });

  it("sums shards endpoint by endpoint", () => {
    const one = new UsageMeter();
    one.add({ requests: 3, costUsd: 0.5 });
    one.endpoint(A, { requests: 3, answered: 3, latencyMs: 30 });
    const two = new UsageMeter();
    two.add({ requests: 1, costUsd: 0.25 });
    two.endpoint(A, { requests: 1, ejections: 1, failures: 1 });
    two.endpoint(B, { requests: 2, answered: 2, latencyMs: 10 });
    const sum = sumUsage(one.totals, two.totals);
    expect(sum.requests).toBe(4);
    expect(sum.costUsd).toBeCloseTo(0.75);
    expect(sum.endpoints?.[A]).toEqual({
      requests: 4,
      answered: 3,
      failures: 1,
      ejections: 1,
      latencyMs: 30,
    });
    expect(sum.endpoints?.[B]?.requests).toBe(2);
    // the inputs are left as they were
    expect(one.totals.endpoints?.[A]?.requests).toBe(3);
  });

  it("shows requests, failures, ejections and mean latency per stage and endpoint", () => {
    const usage = new UsageMeter();
    usage.endpoint(A, { requests: 4, answered: 3, failures: 1, ejections: 1, latencyMs: 600 });
    usage.endpoint(B, { requests: 1, failures: 1 });
    const rows = [
      { stage: "filter", state: "complete", configHash: "x", manifest: { usage: usage.totals } },
      { stage: "dedup", state: "complete", configHash: "y", manifest: { usage: new UsageMeter().totals } },
    ] as unknown as StageStatus[];
    const out = new PassThrough();
    printEndpointUsage(rows, out);
    const text = out.read().toString();
    expect(text).toMatch(/stage\s+endpoint\s+requests\s+failed\s+ejections\s+mean latency/);
    expect(text).toMatch(new RegExp(`filter\\s+${A}\\s+4\\s+1\\s+1\\s+200 ms`));
    expect(text).toMatch(new RegExp(`filter\\s+${B}\\s+1\\s+1\\s+0\\s+-`));
    expect(text).not.toContain("dedup");
    expect(describeEndpoints(usage.totals)[0]).toBe(
      `${A}: 4 requests, 1 failed, 1 ejections, mean latency 200 ms`,
    );
    const none = new PassThrough();
    printEndpointUsage([rows[1]!], none);
    expect(none.read()).toBeNull();
  });

  it("counts sandbox programs per server, carries them on, sums them over shards, and shows them beside the server", () => {
    const S1 = "http://10.0.0.3:8080/run_code";
    const S2 = "http://10.0.0.4:8080/run_code";
    const one = new UsageMeter();
    one.ran(120, S1);
    const saved = JSON.parse(JSON.stringify(one.programs));
    // a resumed run goes on from the previous run's count, without changing it
    const resumed = new UsageMeter(undefined, saved);
    resumed.ran(30, S2);
    expect(saved).toEqual({ runs: 1, busyMs: 120, endpoints: { [S1]: { runs: 1, busyMs: 120 } } });
    const two = new UsageMeter();
    two.ran(50, S1);
    expect(new UsageMeter().programs).toBeUndefined();
    const sum = sumSandbox([resumed.programs, undefined, two.programs])!;
    expect(sum).toEqual({
      runs: 3,
      busyMs: 200,
      longestMs: 120,
      endpoints: { [S1]: { runs: 2, busyMs: 170 }, [S2]: { runs: 1, busyMs: 30 } },
    });
    // one program's count keeps no longest (its busy time is it); one saved without a longest adds
    // nothing to it
    expect(two.programs).toEqual({ runs: 1, busyMs: 50, endpoints: { [S1]: { runs: 1, busyMs: 50 } } });
    expect(sumSandbox([{ runs: 1, busyMs: 300 }, { runs: 4, busyMs: 900 }, two.programs])).toEqual({
      runs: 6,
      busyMs: 1250,
      longestMs: 300,
      endpoints: { [S1]: { runs: 1, busyMs: 50 } },
    });
    // the inputs are left as they were
    expect(resumed.programs!.endpoints![S1]).toEqual({ runs: 1, busyMs: 120 });
    expect(describeSandbox(sum)).toBe("3 programs, 0.2 s busy");

    const usage = new UsageMeter();
    usage.endpoint(S1, { requests: 3, answered: 2, failures: 1, latencyMs: 400 });
    usage.endpoint(A, { requests: 1, answered: 1, latencyMs: 100 });
    const rows = [
      {
        stage: "validate",
        state: "complete",
        configHash: "x",
        manifest: { usage: usage.totals, sandbox: sum },
      },
    ] as unknown as StageStatus[];
    const out = new PassThrough();
    printEndpointUsage(rows, out);
    const text = out.read().toString();
    expect(text).toMatch(/mean latency\s+programs\s+busy/);
    expect(text).toMatch(new RegExp(`validate\\s+${S1}\\s+3\\s+1\\s+0\\s+200 ms\\s+2\\s+0\\.2 s`));
    expect(describeEndpoints(usage.totals, sum)[0]).toBe(
      `${S1}: 3 requests, 1 failed, 0 ejections, mean latency 200 ms, 2 programs, 0.2 s busy`,
    );
    // an LLM endpoint ran no program
    expect(describeEndpoints(usage.totals, sum)[1]).toBe(
      `${A}: 1 requests, 0 failed, 0 ejections, mean latency 100 ms`,
    );
  });
});
