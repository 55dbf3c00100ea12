// The real CLI over stages with a bug: `broken` throws where the runner awaits it, `late` from a
// timer that nothing awaits. What a user sees of an error that is no UserError.
import { z } from "zod";
import { main } from "../../pipeline/cli.js";
import { defineStage, type Stage } from "../../pipeline/stage.js";
import { numbersStage } from "./toy-stages.js";

const brokenStage = defineStage({
  name: "broken",
  description: "throws a TypeError",
  upstream: ["numbers"],
  kind: "global",
  configSchema: z.object({}).strict(),
  run: async () => {
    throw new TypeError("a stand-in bug: cannot read properties of undefined");
  },
});

const lateStage = defineStage({
  name: "late",
  description: "throws from a timer",
  upstream: ["numbers"],
  kind: "global",
  configSchema: z.object({}).strict(),
  run: async () => {
    setTimeout(() => {
      throw new RangeError("a stand-in bug in a timer");
    }, 1);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  },
});

await main(process.argv.slice(2), [numbersStage, brokenStage, lateStage] as Stage<unknown>[]);
