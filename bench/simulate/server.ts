// The benchmark's LLM server, in its own process: the test server (test/support/llm-server.ts)
// answering every part of a simulated interaction after `--latency` ms. Each dialogue takes five
// requests: the weak answer, the strong model's analysis of its run, the reviewer's JSON feedback, the
// refinement, and the analysis of the refinement's run. Prints `listening <url>`; SIGUSR2 reports the
// request count.
import { startLlmServer } from "../../test/support/llm-server.js";
import { numberArg } from "../args.js";

const fence = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

const server = await startLlmServer({
  latencyMs: numberArg("latency", 200),
  keepRequests: false,
  fallback: (r) => {
    const messages = r.body.messages;
    const last = messages.at(-1)!.content;
    if (messages[0]!.content.startsWith("You are a user who gives feedback")) {
      return '{"satisfied": "It runs.", "not_satisfied": "No comments.", "feedback": "Please comment the loop."}';
    }
    if (r.body.model === "bench-weak") {
      const n = last.length % 97;
      return `I will compute it.\n${fence(`total = sum(range(${n}))\nprint(total)`)}`;
    }
    if (last.startsWith("Execution result"))
      return "The code printed the expected total, so the task is done.";
    return `Commented:\n${fence("# add the numbers up\nprint(total * 2)")}`;
  },
});
process.stdout.write(`listening ${server.url}\n`);
process.on("SIGUSR2", () => process.stdout.write(`count ${server.count}\n`));
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
