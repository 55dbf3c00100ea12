// Kill -9 at random instants, resume, and compare with an uninterrupted run: same records, no duplicate.
import { appendFileSync, existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readEntries } from "../../pipeline/store/parts.js";
import { runKillableChild } from "../support/killable-child.js";
import { collect, makeRunner } from "../support/runner-kit.js";
import { tempDir } from "../support/temp-dir.js";
import { TOY_STAGES } from "../support/toy-stages.js";

const CHILD_YAML = "stages:\n  numbers: {count: 4000}\n  expand: {delay_ms: 12, concurrency: 4}\n";
const CHILD = new URL("../support/crash-child.ts", import.meta.url).pathname;

/** Runs the child; kills it `killAfterMs` after the stage has started writing (or after spawn if `early`). */
function runChild(dir: string, killAfterMs?: number, early = false): Promise<"done" | "killed"> {
  return runKillableChild(CHILD, [dir], { watch: `${dir}/data/expand/parts`, killAfterMs, early });
}

describe("crash safety", () => {
  it("survives 12 SIGKILLs at random instants with no lost and no duplicated record", async () => {
    // the same stage without latency: latency changes when records finish, never what they are
    const reference = makeRunner(TOY_STAGES, { dir: tempDir(), yaml: "stages:\n  numbers: {count: 4000}\n" });
    await reference.run(["expand"]);
    const expected = (await collect(reference.store("expand").read())).map((r) => JSON.stringify(r)).sort();
    const expectedRejects = (await collect(reference.store("expand").read({ rejects: true }))).length;

    const dir = tempDir();
    let kills = 0;
    let finished = false;
    let tornWritten = false;
    for (let attempt = 0; attempt < 40 && !finished; attempt++) {
      if (kills < 12) {
        // most kills land while the stage is writing; every fourth at any instant after spawn
        const early = attempt % 4 === 3;
        const outcome = await runChild(dir, Math.random() * (early ? 1500 : 500), early);
        if (outcome === "killed") kills++;
        else finished = true;
        // a torn last line, as a power loss in the middle of an append would leave
        const partsDir = `${dir}/data/expand/parts`;
        if (kills >= 5 && !tornWritten && existsSync(partsDir)) {
          const parts = readdirSync(partsDir).filter((f) => f.startsWith("part-"));
          if (parts.length) {
            appendFileSync(`${partsDir}/${parts.sort().at(-1)}`, '{"s":3,"o":[{"id":"tor');
            tornWritten = true;
          }
        }
      } else {
        finished = (await runChild(dir)) === "done";
      }
    }
    expect(kills).toBeGreaterThanOrEqual(10);
    expect(tornWritten).toBe(true);
    expect(finished).toBe(true);
    const runner = makeRunner(TOY_STAGES, { dir, yaml: CHILD_YAML });
    expect(runner.status("expand").state).toBe("complete");
    const got = (await collect(runner.store("expand").read())).map((r) => JSON.stringify(r)).sort();
    expect(new Set(got).size).toBe(got.length);
    // read() shows each position once by construction; the raw parts must too: no input committed twice
    const committed: number[] = [];
    for (const part of runner.store("expand").parts()) {
      for await (const entry of readEntries(part)) if (!entry.f) committed.push(entry.s);
    }
    expect(committed.length).toBe(4000);
    expect(new Set(committed).size).toBe(4000);
    expect(got).toEqual(expected);
    expect((await collect(runner.store("expand").read({ rejects: true }))).length).toBe(expectedRejects);
    expect(runner.status("expand").manifest!.counts).toEqual(reference.status("expand").manifest!.counts);
    expect(runner.status("expand").manifest!.outputHash).toBe(
      reference.status("expand").manifest!.outputHash,
    );
  });
});
