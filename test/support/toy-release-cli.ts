// The real CLI over the toy stages and a release stage (toy-release.ts), for testing `push`.
import { main } from "../../pipeline/cli.js";
import { TOY_RELEASE_STAGES } from "./toy-release.js";

await main(process.argv.slice(2), TOY_RELEASE_STAGES);
