// Child process for the crash test: runs the toy pipeline's record-wise stage in a data dir given on
// the command line (or one shard of it, given as K/N), slowly enough that the parent can SIGKILL it
// mid-stage.

import { parseShardSpec } from "../../pipeline/runner/shard.js";
import { makeRunner } from "./runner-kit.js";
import { TOY_STAGES } from "./toy-stages.js";

const dir = process.argv[2]!;
const runner = makeRunner(TOY_STAGES, {
  dir,
  yaml: "stages:\n  numbers: {count: 4000}\n  expand: {delay_ms: 12, concurrency: 4}\n",
});
// an optional `K/N` runs only that shard of expand (numbers must be complete already)
const shard = process.argv[3] ? parseShardSpec(process.argv[3]) : undefined;
await runner.run(["expand"], shard ? { shard } : {});
process.stdout.write("done\n");
