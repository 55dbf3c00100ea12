// A complete stage is read against the seal its manifest keeps (each part's size and SHA-256, and the
// counts): outside damage stops the reader with advice instead of losing a record without a word.
import { readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../pipeline/store/parts.js";
import { StageStore } from "../../pipeline/store/stage-store.js";
import { collect } from "../support/runner-kit.js";
import { toyCli, toyConfig } from "../support/toy-cli-kit.js";

/** The toy stages run up to expand, in a fresh dir. */
function setup(): { data: string; config: string } {
  const { data, config } = toyConfig();
  expect(toyCli(["run", "expand", "--config", config]).code).toBe(0);
  return { data, config };
}

function onlyPart(data: string, stage: string): string {
  const parts = readdirSync(join(data, stage, "parts"));
  expect(parts).toHaveLength(1);
  return join(data, stage, "parts", parts[0]!);
}

describe("a complete stage damaged after it completed", () => {
  it("a cut last line stops cat with exit 2, naming the stage and the fix; status calls it stale and run recomputes it", () => {
    const { data, config } = setup();
    const part = onlyPart(data, "expand");
    const text = readFileSync(part, "utf8");
    // cut inside the last line, as a disk fault or an interrupted copy leaves it
    truncateSync(part, text.length - 10);

    const cat = toyCli(["cat", "expand", "--config", config]);
    expect(cat.code).toBe(2);
    expect(cat.stderr).toContain("stage expand is damaged");
    expect(cat.stderr).toContain("pnpm pipeline run expand --force");

    // status says so, and a run of a stage after it recomputes it (like any stale stage) first
    expect(toyCli(["status", "--config", config]).stdout).toMatch(
      /^expand\s+stale \(its parts were damaged after it completed/m,
    );
    expect(toyCli(["status", "--stage", "expand", "--config", config]).stdout).toMatch(
      /reason: +its parts were damaged after it completed: part part-00000\.jsonl has \d+ bytes where its manifest says \d+/,
    );
    const total = toyCli(["run", "total", "--config", config]);
    expect(total.code).toBe(0);
    expect(total.stderr).toContain("expand: stale (its parts were damaged after it completed");
    expect(toyCli(["cat", "expand", "--config", config]).stdout.trim().split("\n")).toHaveLength(9);
    const [sum] = toyCli(["cat", "total", "--config", config]).stdout.trim().split("\n");
    expect(JSON.parse(sum!)).toMatchObject({ id: "total", n: 9 });

    // and so does the advice
    truncateSync(part, text.length - 10);
    expect(toyCli(["cat", "expand", "--config", config]).code).toBe(2);
    expect(toyCli(["run", "expand", "--force", "--config", config]).code).toBe(0);
    expect(toyCli(["cat", "expand", "--config", config]).stdout.trim().split("\n")).toHaveLength(9);
    expect(toyCli(["run", "total", "--config", config]).code).toBe(0);
  });

  it("a whole last line gone is caught too", () => {
    const { data, config } = setup();
    const part = onlyPart(data, "expand");
    const lines = readFileSync(part, "utf8").split("\n").filter(Boolean);
    writeFileSync(part, `${lines.slice(0, -1).join("\n")}\n`);
    const cat = toyCli(["cat", "expand", "--config", config]);
    expect(cat.code).toBe(2);
    expect(cat.stderr).toMatch(
      /stage expand is damaged: part part-00000\.jsonl has \d+ bytes where its manifest says \d+/,
    );
  });

  it("a changed record of the same size is caught by the digest once its part is read", async () => {
    const { data } = setup();
    const part = onlyPart(data, "expand");
    const text = readFileSync(part, "utf8");
    expect(text).toContain('"copy":1');
    writeFileSync(part, text.replace('"copy":1', '"copy":7'));
    const error = await collect(new StageStore(data, "expand").read()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toContain(
      "part part-00000.jsonl differs from what its manifest recorded",
    );
  });

  it("a part that was added, or the count in the manifest, disagreeing is caught", async () => {
    const { data } = setup();
    const store = new StageStore(data, "expand");
    const manifest = store.manifest()!;
    expect(manifest.parts).toHaveLength(1);
    writeFileSync(join(store.partsDir, "part-00001.jsonl"), '{"s":99,"o":[{"id":"stray"}]}\n');
    await expect(collect(store.read())).rejects.toThrow(
      "part part-00001.jsonl was not there when it completed",
    );
    writeFileSync(join(store.partsDir, "part-00001.jsonl"), "");
    // a manifest whose count disagrees with intact parts (edited by hand): the count is checked too
    const sealed = {
      ...manifest,
      parts: [
        ...manifest.parts!,
        {
          ...manifest.parts![0]!,
          file: "part-00001.jsonl",
          bytes: 0,
          sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        },
      ],
    };
    writeFileSync(
      join(store.dir, "manifest.json"),
      JSON.stringify({ ...sealed, counts: { ...manifest.counts, out: 10 } }),
    );
    await expect(collect(store.read())).rejects.toThrow(
      "its parts hold 9 records where its manifest counts 10",
    );
    writeFileSync(join(store.dir, "manifest.json"), JSON.stringify(sealed));
    expect(await collect(store.read())).toHaveLength(9);
    expect(await collect(store.read({ rejects: true }))).toHaveLength(3);
  });
});

describe("an unreadable manifest.json", () => {
  it("status advises reset, and reset (with or without --purge) then works, also for the stage upstream of it", () => {
    const { data, config } = setup();
    writeFileSync(join(data, "expand", "manifest.json"), '{"version":1,"stage":"exp');
    const status = toyCli(["status", "--config", config]);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain("pnpm pipeline reset");

    // resetting the stage upstream of it reads it for staleness: that must not stop the reset
    const upstream = toyCli(["reset", "numbers", "--config", config]);
    expect(upstream.stderr).toBe("numbers: outputs removed; downstream: expand, total marked stale\n");
    expect(upstream.code).toBe(0);

    const reset = toyCli(["reset", "expand", "--config", config]);
    expect(reset.code).toBe(0);
    writeFileSync(join(data, "expand", "manifest.json"), "not json");
    const purge = toyCli(["reset", "expand", "--purge", "--config", config]);
    expect(purge.code).toBe(0);
    const after = JSON.parse(toyCli(["status", "--json", "--config", config]).stdout);
    expect(after.map((s: { state: string }) => s.state)).toEqual([
      "not started",
      "not started",
      "not started",
    ]);
    expect(toyCli(["run", "expand", "--config", config]).code).toBe(0);
  });
});
