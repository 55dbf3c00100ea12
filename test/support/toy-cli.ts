// The real CLI over the toy stages, for testing the commands without LLMs or downloads.
import { main } from "../../pipeline/cli.js";
import { TOY_STAGES } from "./toy-stages.js";

await main(process.argv.slice(2), TOY_STAGES);
