// A local OpenAI-compatible embeddings server for tests: `POST /v1/embeddings` answers the OpenAI
// wire format (`{object: "list", data: [{object, index, embedding}], model, usage}`) with vectors
// derived from each input's words (texts sharing words are close), plus the faults real servers
// show: a 400 for an input it refuses (too long for the model), a vector of the wrong length, 5xx
// a few times, latency, and a required key.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { LexicalEmbedder } from "../../pipeline/embed/lexical.js";

export interface EmbeddingsServerOptions {
  dimension?: number;
  latencyMs?: number;
  /** a request with an input matching this gets HTTP 400, as TEI does for an input over its limit */
  refuse?: RegExp;
  /** inputs matching this get a vector one number short */
  wrongDimension?: RegExp;
  /** the first N requests get HTTP 503 */
  failFirst?: number;
  requireKey?: string;
  /** requests for vectors are read and never answered (a server whose model hangs); other routes answer */
  hang?: boolean;
  /** default: any free port */
  port?: number;
}

export interface EmbeddingsServer {
  /** `http://127.0.0.1:PORT/v1` */
  url: string;
  /** inputs of every request answered with vectors, in arrival order */
  requests: string[][];
  /** requests for vectors left unanswered (`hang`) */
  hung: number;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

export async function startEmbeddingsServer(
  options: EmbeddingsServerOptions = {},
): Promise<EmbeddingsServer> {
  const dimension = options.dimension ?? 48;
  const words = new LexicalEmbedder({
    kind: "lexical",
    dimensions: dimension,
    word_ngrams: [1],
    char_ngrams: [],
    batch_size: 1,
  });
  const requests: string[][] = [];
  let failures = options.failFirst ?? 0;
  const state: EmbeddingsServer = {
    url: "",
    requests,
    hung: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const reply = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    void (async () => {
      const text = await body(req);
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      if (req.method !== "POST" || req.url !== "/v1/embeddings") {
        return reply(404, { error: { message: `no route ${req.method} ${req.url}` } });
      }
      if (options.hang) {
        state.hung++;
        return;
      }
      if (options.requireKey && req.headers.authorization !== `Bearer ${options.requireKey}`) {
        return reply(401, { error: { message: "invalid api key", type: "invalid_request_error" } });
      }
      if (failures > 0) {
        failures--;
        return reply(503, { error: { message: "model is loading" } });
      }
      const request = JSON.parse(text) as {
        model: string;
        input: string | string[];
        encoding_format?: string;
      };
      const inputs = typeof request.input === "string" ? [request.input] : request.input;
      const refused = options.refuse ? inputs.find((i) => options.refuse!.test(i)) : undefined;
      if (refused !== undefined) {
        return reply(400, {
          error: {
            message: `Input validation error: inputs must have less than 512 tokens`,
            type: "validation",
          },
        });
      }
      requests.push(inputs);
      const data = inputs.map((input, index) => {
        const vector = Array.from(words.vectorOf(input));
        if (options.wrongDimension?.test(input)) vector.pop();
        return { object: "embedding", index, embedding: vector };
      });
      // answered out of order, as some servers do: clients must go by `index`
      data.reverse();
      reply(200, {
        object: "list",
        data,
        model: request.model,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}/v1`;
  return state;
}
