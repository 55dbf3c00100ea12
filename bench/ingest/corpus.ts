// A synthetic corpus shaped like the four real sources (row counts, formats, fields, rough lengths;
// about 630 MB at scale 1), laid out as a hub directory for a `file:` endpoint. A few percent of the
// queries are exact or near duplicates, one in a thousand a benchmark prompt, and one row in a
// thousand has an empty answer; text is random words from a large vocabulary plus fenced code, so
// shingles are as diverse as in real instructions.
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { seededUint32 } from "../../pipeline/random.js";
import { askedLanguage } from "../../stages/validate/asks.js";

export interface SourceShape {
  name: "magicoder" | "sharegpt" | "wizardcoder" | "evolinstruct";
  /** rows in the real dataset */
  rows: number;
  /** mean characters of query and answer in the real dataset (rough) */
  queryChars: number;
  answerChars: number;
  file: string;
  format: "jsonl" | "json";
}

/** The paper's 287,252 rows: 75,197 + 22,608 + 111,183 + 78,264. */
export const SHAPES: SourceShape[] = [
  {
    name: "magicoder",
    rows: 75_197,
    queryChars: 1060,
    answerChars: 1150,
    file: "oss.jsonl",
    format: "jsonl",
  },
  {
    name: "sharegpt",
    rows: 22_608,
    queryChars: 390,
    answerChars: 1150,
    file: "sharegpt.json",
    format: "json",
  },
  {
    name: "wizardcoder",
    rows: 111_183,
    queryChars: 600,
    answerChars: 1790,
    file: "evol110k.jsonl",
    format: "jsonl",
  },
  {
    name: "evolinstruct",
    rows: 78_264,
    queryChars: 300,
    answerChars: 1060,
    file: "evol80k.json",
    format: "json",
  },
];

const LANGS = [
  "python",
  "javascript",
  "java",
  "cpp",
  "go",
  "rust",
  "typescript",
  "sql",
  "shell",
  "csharp",
  "php",
];

class TextMaker {
  private readonly random: () => number;
  private readonly vocabulary: string[];

  constructor(seed: number) {
    this.random = seededUint32(seed);
    const letters = "abcdefghijklmnopqrstuvwxyz";
    this.vocabulary = Array.from({ length: 30_000 }, () => {
      const n = 2 + this.int(9);
      let w = "";
      for (let i = 0; i < n; i++) w += letters[this.int(26)];
      // a word that names a language ("js", "php") would make validate's wrong-language gate drop
      // the dialogues of the queries it lands in
      return askedLanguage(w) ? `${w}${w}` : w;
    });
  }

  int(n: number): number {
    return this.random() % n;
  }

  /** A length around `mean`: a skewed spread from a fifth to about three times the mean. */
  length(mean: number): number {
    const u = (this.random() / 2 ** 32) * 0.999 + 0.0005;
    return Math.max(20, Math.round(mean * 0.2 + mean * 0.8 * -Math.log(1 - u)));
  }

  words(chars: number): string {
    const out: string[] = [];
    let n = 0;
    while (n < chars) {
      // Zipf-like: common words are reused often, rare ones rarely
      const r = this.random() / 2 ** 32;
      const word = this.vocabulary[Math.floor(this.vocabulary.length * r * r * r)]!;
      out.push(word);
      n += word.length + 1;
    }
    return out.join(" ");
  }

  code(chars: number, lang: string): string {
    const lines: string[] = [];
    let n = 0;
    while (n < chars) {
      const indent = "    ".repeat(this.int(3));
      const name = this.words(20 + this.int(40)).replace(/ /g, "_");
      // Python that runs, as validate runs the blocks of pack's dialogues
      const line = lang === "python" ? `${name} = ${this.int(100)}` : `${indent}${name}(${this.int(100)});`;
      lines.push(line);
      n += line.length + 1;
    }
    return `\`\`\`${lang}\n${lines.join("\n")}\n\`\`\``;
  }

  answer(chars: number, lang: string): string {
    const codeChars = Math.round(chars * 0.6);
    return `${this.words(Math.round(chars * 0.15))}\n\n${this.code(codeChars, lang)}\n\n${this.words(Math.round(chars * 0.25))}`;
  }
}

/** HumanEval- and MBPP-sized sets of synthetic prompts (164 + 500), in the corpus's vocabulary. */
export function benchmarkPrompts(): Array<{
  benchmark: "humaneval" | "mbpp";
  task_id: string;
  prompt: string;
}> {
  const maker = new TextMaker(99);
  return Array.from({ length: 664 }, (_, i) => ({
    benchmark: i < 164 ? ("humaneval" as const) : ("mbpp" as const),
    task_id: i < 164 ? `HumanEval/${i}` : String(i - 164 + 11),
    prompt: maker.words(200 + maker.int(600)),
  }));
}

/**
 * Row `i` of a source: mostly fresh text, sometimes a copy (exact) or an edit (near) of an earlier
 * query, now and then a benchmark prompt or an empty answer.
 */
function makeRow(
  shape: SourceShape,
  i: number,
  maker: TextMaker,
  recent: string[],
  prompts: ReturnType<typeof benchmarkPrompts>,
): Record<string, unknown> {
  const lang = LANGS[maker.int(LANGS.length)]!;
  let query: string;
  const roll = maker.int(1000);
  if (roll === 0) {
    query = `Solve this: ${prompts[maker.int(prompts.length)]!.prompt}`;
  } else if (roll < 30 && recent.length > 0) {
    query = recent[maker.int(recent.length)]!.toUpperCase();
  } else if (roll < 50 && recent.length > 0) {
    const base = recent[maker.int(recent.length)]!;
    query = `${base} ${maker.words(12)}`;
  } else {
    query = maker.words(maker.length(shape.queryChars));
  }
  if (recent.length < 2000) recent.push(query);
  else recent[maker.int(recent.length)] = query;
  const answer = roll === 999 ? "" : maker.answer(maker.length(shape.answerChars), lang);
  switch (shape.name) {
    case "magicoder":
      return {
        lang,
        raw_index: i * 7,
        index: i,
        seed: maker.code(300, lang),
        openai_fingerprint: "fp_bench",
        problem: query,
        solution: answer,
      };
    case "sharegpt":
      return {
        id: String(i),
        conversations: [
          { from: "human", value: query },
          { from: "gpt", value: answer },
        ],
      };
    case "wizardcoder":
      return { instruction: query, response: answer };
    default:
      return { instruction: query, output: answer };
  }
}

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

async function close(stream: WriteStream): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

export interface GeneratedSource {
  shape: SourceShape;
  rows: number;
  /** the dataset on the (directory) hub, `bench/<name>` */
  repo: string;
  /** the file in the source's real format */
  file: string;
  /** the same rows as JSON Lines, for the raw-copy baseline */
  plain: string;
  bytes: number;
}

/** Where `generateCorpus` puts each source under `dir`. */
export function corpusLayout(dir: string, scale: number): GeneratedSource[] {
  return SHAPES.map((shape) => ({
    shape,
    rows: Math.max(1, Math.round(shape.rows * scale)),
    repo: `bench/${shape.name}`,
    file: path.join(dir, "hub", "bench", shape.name, shape.file),
    plain: path.join(dir, "plain", `${shape.name}.jsonl`),
    bytes: 0,
  }));
}

/**
 * Writes every source in its real format under `<dir>/hub/bench/<name>/`, the same rows as JSON Lines
 * under `<dir>/plain/`, and the benchmark prompts as `<dir>/hub/bench/prompts/<benchmark>.jsonl`.
 */
export async function generateCorpus(dir: string, scale: number): Promise<GeneratedSource[]> {
  const prompts = benchmarkPrompts();
  await mkdir(path.join(dir, "hub", "bench", "prompts"), { recursive: true });
  for (const benchmark of ["humaneval", "mbpp"] as const) {
    const lines = prompts.filter((p) => p.benchmark === benchmark).map((p) => JSON.stringify(p));
    await writeFile(path.join(dir, "hub", "bench", "prompts", `${benchmark}.jsonl`), `${lines.join("\n")}\n`);
  }
  const out: GeneratedSource[] = [];
  for (const [s, layout] of corpusLayout(dir, scale).entries()) {
    const { shape, rows, file, plain } = layout;
    const maker = new TextMaker(1000 + s);
    await mkdir(path.dirname(file), { recursive: true });
    await mkdir(path.dirname(plain), { recursive: true });
    const real = createWriteStream(file);
    const copy = createWriteStream(plain);
    const recent: string[] = [];
    let bytes = 0;
    if (shape.format === "json") await write(real, "[\n");
    for (let i = 0; i < rows; i++) {
      const json = JSON.stringify(makeRow(shape, i, maker, recent, prompts));
      const line = shape.format === "json" ? `${i === 0 ? "" : ",\n"}    ${json}` : `${json}\n`;
      bytes += Buffer.byteLength(line);
      await write(real, line);
      await write(copy, `${json}\n`);
    }
    if (shape.format === "json") await write(real, "\n]\n");
    await close(real);
    await close(copy);
    out.push({ ...layout, bytes });
  }
  return out;
}
