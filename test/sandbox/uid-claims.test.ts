// Two sandboxes on one machine never share a host uid; claims of dead processes are taken over.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claimUids, releaseUids } from "../../pipeline/sandbox/uid-claims.js";
import { RUNNING_AS_ROOT } from "./helpers.js";

describe.skipIf(!RUNNING_AS_ROOT)("uid claims", () => {
  const base = 65000 + (process.pid % 500) * 4;

  it("gives a second claimer other uids until the first releases them", () => {
    const first = claimUids(base, 2);
    const second = claimUids(base, 2);
    expect(first).toEqual([base, base + 1]);
    expect(second).toEqual([base + 2, base + 3]);
    releaseUids(first);
    const third = claimUids(base, 1);
    expect(third).toEqual([base]);
    releaseUids([...second, ...third]);
  });

  it("takes over a claim whose process is gone", () => {
    const deadPid = spawnSync("/usr/bin/true").pid!;
    writeFileSync(join(tmpdir(), "codefeedback-sandbox-uids", String(base)), String(deadPid));
    const claimed = claimUids(base, 1);
    expect(claimed).toEqual([base]);
    releaseUids(claimed);
  });
});
