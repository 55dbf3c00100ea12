// The benchmark's servers in a process of their own, so their CPU is not the stage's: the local hub
// serving the generated corpus and the LLM test server answering every role after `--latency` ms
// (answers.ts). Prints `{"hub": URL, "llm": URL}`; on SIGUSR2, `{"requests": N, "maxInFlight": M}`.
//
//   node --import tsx bench/e2e/servers.ts --root DIR/hub --latency 500
import { startTestHub } from "../../test/support/hub-server.js";
import { startLlmServer } from "../../test/support/llm-server.js";
import { textArg } from "../args.js";
import { benchAnswer } from "./answers.js";

const hub = await startTestHub({ root: textArg("root")! });
const llm = await startLlmServer({
  latencyMs: Number(textArg("latency") ?? 500),
  keepRequests: false,
  fallback: benchAnswer,
});
process.stdout.write(`${JSON.stringify({ hub: hub.url, llm: llm.url })}\n`);
process.on("SIGUSR2", () =>
  process.stdout.write(`${JSON.stringify({ requests: llm.count, maxInFlight: llm.maxInFlight })}\n`),
);
process.on("SIGTERM", () => void Promise.all([hub.close(), llm.close()]).then(() => process.exit(0)));
