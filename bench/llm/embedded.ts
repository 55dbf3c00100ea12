// The filter stage on the embedded provider against a raw node-llama-cpp loop: same GGUF model,
// prompts, grammar, sampling and parallel sequences, in one process; tokens per second of each, the
// median of alternating runs' ratios (target >= 0.90). `-- --model FILE.gguf` measures a real model
// instead of random weights. Details: docs/BENCHMARKS.md, "The embedded provider".
//   pnpm bench llm-embedded [-- --records 4 --sequences 4 --runs 5 --max-tokens 32 --shape small --threads 1]
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { getLlama, LlamaChat, resolveChatWrapper } from "node-llama-cpp";
import { hubConfigSchema } from "../../pipeline/hub/config.js";
import { llmConfigSchema } from "../../pipeline/llm/config.js";
import { createLlmService } from "../../pipeline/llm/index.js";
import { loadPrompt } from "../../pipeline/llm/prompts.js";
import { silentLogger } from "../../pipeline/log.js";
import type { PipelineRecord } from "../../pipeline/record.js";
import { UsageMeter } from "../../pipeline/usage.js";
import { complexityMessages, SCORE_GRAMMAR } from "../../stages/filter/complexity.js";
import { filterConfigSchema } from "../../stages/filter/config.js";
import { filterRecord, openFilter } from "../../stages/filter.js";
import { SMALL_LLAMA, TINY_LLAMA, writeLlamaGguf } from "../../test/support/tiny-gguf.js";
import { numberArg, textArg } from "../args.js";
import { upperMedian } from "../median.js";
import { filterContext } from "./filter-context.js";

const RECORDS = numberArg("records", 4);
const SEQUENCES = numberArg("sequences", 4);
const RUNS = numberArg("runs", 5);
const MAX_TOKENS = numberArg("max-tokens", 32);
const CONTEXT = numberArg("context", 4096);
// unset: llama.cpp's default (every core); 1 on a machine shared with other work, where its spinning
// thread barriers cost more than the threads bring
const THREADS = textArg("threads") === undefined ? undefined : numberArg("threads", 1);
const SHAPE = textArg("shape") === "tiny" ? TINY_LLAMA : SMALL_LLAMA;
const ROUNDS = ["complexity-1", "complexity-2"];
const SAMPLING = { temperature: 0, max_tokens: MAX_TOKENS };

function records(n: number, tag: string): PipelineRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    query: `Write a function (${tag} ${i}) that merges ${i + 2} sorted lists and explain its complexity.`,
    answer: "",
    resource: "bench",
    lang: "python",
  }));
}

interface Figures {
  seconds: number;
  promptTokens: number;
  completionTokens: number;
}

const rate = (f: Figures) => (f.promptTokens + f.completionTokens) / f.seconds;

/** The filter stage's own code on the embedded provider, a fresh cache, the model warmed first. */
async function pipeline(modelFile: string, input: PipelineRecord[], warm: PipelineRecord): Promise<Figures> {
  const dataDir = mkdtempSync(join(tmpdir(), "cf-bench-embedded-"));
  const llm = llmConfigSchema.parse({
    scorer: {
      provider: "embedded",
      embedded: {
        path: modelFile,
        sequences: SEQUENCES,
        context_size: CONTEXT,
        ...(THREADS === undefined ? {} : { threads: THREADS }),
      },
      sampling: SAMPLING,
    },
  });
  const service = createLlmService(llm, {
    dataDir,
    noCache: false,
    log: silentLogger,
    env: {},
    hub: hubConfigSchema.parse({}),
  });
  const config = filterConfigSchema.parse({ rounds: ROUNDS, rule: "every" });
  const ctx = filterContext(llm, service, config, dataDir);
  const { usage } = ctx;
  const warmCtx = { ...ctx, usage: new UsageMeter() };
  await filterRecord(warm, warmCtx, openFilter(warmCtx));
  const run = openFilter(ctx);
  const started = performance.now();
  // the runner's loop: at most twice the sequences in flight (the stage's default over its limit)
  let next = 0;
  const worker = async () => {
    while (next < input.length) await filterRecord(input[next++]!, ctx, run);
  };
  await Promise.all(Array.from({ length: 2 * SEQUENCES }, worker));
  const seconds = (performance.now() - started) / 1000;
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
  if (usage.totals.failedRequests > 0)
    throw new Error(`pipeline: ${usage.totals.failedRequests} requests failed`);
  return {
    seconds,
    promptTokens: usage.totals.promptTokens,
    completionTokens: usage.totals.completionTokens,
  };
}

/** A plain node-llama-cpp loop over the same requests: one worker per sequence. */
async function raw(modelFile: string, input: PipelineRecord[], warm: PipelineRecord): Promise<Figures> {
  const llama = await getLlama({ build: "never" });
  const model = await llama.loadModel({ modelPath: modelFile });
  const context = await model.createContext({
    sequences: SEQUENCES,
    contextSize: CONTEXT,
    ...(THREADS === undefined ? {} : { threads: THREADS }),
  });
  const wrapper = resolveChatWrapper(model) ?? undefined;
  const grammar = await llama.createGrammar({ grammar: SCORE_GRAMMAR });
  const templates = ROUNDS.map((name) => loadPrompt(name));
  const requests = (records: PipelineRecord[]) =>
    records.flatMap((r) => templates.map((t) => complexityMessages(t, r.query as string)[0]!.content));
  const chats = Array.from(
    { length: SEQUENCES },
    () =>
      new LlamaChat({ contextSequence: context.getSequence(), ...(wrapper ? { chatWrapper: wrapper } : {}) }),
  );
  let promptTokens = 0;
  let completionTokens = 0;
  const ask = async (chat: LlamaChat, text: string) => {
    const history = [
      { type: "user" as const, text },
      { type: "model" as const, response: [] },
    ];
    promptTokens += chat.chatWrapper
      .generateContextState({ chatHistory: history })
      .contextText.tokenize(model.tokenizer).length;
    await chat.generateResponse(history, {
      maxTokens: MAX_TOKENS,
      temperature: 0,
      grammar,
      onToken: (tokens) => {
        completionTokens += tokens.length;
      },
    });
  };
  for (const text of requests([warm])) await ask(chats[0]!, text);
  promptTokens = 0;
  completionTokens = 0;
  const queue = requests(input);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    chats.map(async (chat) => {
      while (next < queue.length) await ask(chat, queue[next++]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await context.dispose();
  await model.dispose();
  return { seconds, promptTokens, completionTokens };
}

async function main(): Promise<void> {
  const given = textArg("model");
  const dir = mkdtempSync(join(tmpdir(), "cf-bench-gguf-"));
  const modelFile = given ?? writeLlamaGguf(join(dir, "bench.gguf"), SHAPE);
  const what = given ?? `random llama ${SHAPE.embedding} wide, ${SHAPE.layers} layers, F32`;
  console.log(
    `bench/llm embedded: ${RECORDS} records x ${ROUNDS.length} rounds, ${SEQUENCES} sequences, ` +
      `max_tokens ${MAX_TOKENS}, threads ${THREADS ?? "default"}, model ${what}; ${cpus().length} cores, ` +
      `load ${loadavg()[0]!.toFixed(1)}`,
  );
  const f = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits });
  const show = (name: string, r: Figures) =>
    `  ${name.padEnd(9)} ${f(r.promptTokens)} prompt + ${f(r.completionTokens)} answer tokens in ` +
    `${f(r.seconds, 2)} s = ${f(rate(r), 1)} tokens/s (${f(r.completionTokens / r.seconds, 1)} answer tokens/s)`;
  // one uncounted pass of each first: page cache, allocator, JIT
  const warm = records(1, "warm")[0]!;
  await raw(modelFile, records(2, "warmup"), warm);
  await pipeline(modelFile, records(2, "warmup"), warm);
  const raws: Figures[] = [];
  const pipes: Figures[] = [];
  for (let run = 1; run <= RUNS; run++) {
    // new records each run: nothing can come from a cache (the pipeline's is fresh anyway)
    const input = records(RECORDS, `run${run}`);
    let r: Figures;
    let p: Figures;
    if (run % 2 === 1) {
      r = await raw(modelFile, input, warm);
      p = await pipeline(modelFile, input, warm);
    } else {
      p = await pipeline(modelFile, input, warm);
      r = await raw(modelFile, input, warm);
    }
    raws.push(r);
    pipes.push(p);
    console.log(
      `run ${run}:\n${show("raw", r)}\n${show("pipeline", p)}\n  ratio ${(rate(p) / rate(r)).toFixed(3)}`,
    );
  }
  const rawRate = upperMedian(raws.map(rate));
  const pipeRate = upperMedian(pipes.map(rate));
  const ratios = pipes.map((p, i) => rate(p) / rate(raws[i]!));
  console.log(
    `median of ${RUNS}: raw ${f(rawRate, 1)} tokens/s, pipeline ${f(pipeRate, 1)} tokens/s ` +
      `(ratio of medians ${(pipeRate / rawRate).toFixed(3)}); median of the runs' ratios: ` +
      `pipeline/raw = ${upperMedian(ratios).toFixed(3)} (target >= 0.90)`,
  );
  if (!given) rmSync(dir, { recursive: true, force: true });
}

await main();
