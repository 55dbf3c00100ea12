// Child process for the crash test: runs the toy pipeline's record-wise stage in a data dir given on
// the command line, slowly enough that the parent can SIGKILL it mid-stage.

import { makeRunner } from "./runner-kit.js";
import { TOY_STAGES } from "./toy-stages.js";

const dir = process.argv[2]!;
const runner = makeRunner(TOY_STAGES, {
  dir,
  yaml: "stages:\n  numbers: {count: 4000}\n  expand: {delay_ms: 12, concurrency: 4}\n",
});
await runner.run(["expand"]);
process.stdout.write("done\n");
