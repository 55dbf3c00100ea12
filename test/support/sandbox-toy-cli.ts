// The real CLI over the stages that run programs in the sandbox (sandbox-toy.ts), for testing how
// `status` shows the programs a stage ran.
import { main } from "../../pipeline/cli.js";
import { SANDBOX_TOY_STAGES } from "./sandbox-toy.js";

await main(process.argv.slice(2), SANDBOX_TOY_STAGES);
