// Child process for the sandbox-metering crash test: runs `programs` (test/support/sandbox-toy.ts),
// or one shard of it given as K/N, over the data dir given on the command line, with the config the
// parent wrote there (`child.yaml`: the /run_code servers it started), so that the parent can SIGKILL
// it mid-stage.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseShardSpec } from "../../pipeline/runner/shard.js";
import { makeRunner } from "./runner-kit.js";
import { SANDBOX_TOY_STAGES } from "./sandbox-toy.js";

const dir = process.argv[2]!;
const runner = makeRunner(SANDBOX_TOY_STAGES, {
  dir,
  yaml: readFileSync(join(dir, "child.yaml"), "utf8"),
  services: true,
});
const shard = process.argv[3] ? parseShardSpec(process.argv[3]) : undefined;
try {
  await runner.run(["programs"], shard ? { shard, only: true } : { only: true });
} finally {
  await runner.options.services.close();
}
process.stdout.write("done\n");
