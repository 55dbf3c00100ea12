// A llama-architecture model with random weights, written as a GGUF file byte by byte, that llama.cpp
// loads like any download: its vocabulary has the 256 byte tokens, printable ASCII pieces and ChatML
// control tokens and template, so chat formatting, sampling, grammars and JSON schemas run through the
// real code. `TINY_LLAMA` answers in milliseconds on two cores; `SMALL_LLAMA` is wider, for benchmarks
// where the model's own work must dominate.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { seededRandom } from "../../pipeline/random.js";

export interface LlamaShape {
  embedding: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  /** the context length the model claims to be trained on */
  context: number;
  seed: number;
  /**
   * Never choose to end a turn: the end-of-turn logit is pushed far down, so answers run to
   * `max_tokens` (unless a grammar leaves nothing else to say). For benchmarks of generation.
   */
  quietEos?: boolean;
}

export const TINY_LLAMA: LlamaShape = {
  embedding: 64,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  feedForward: 128,
  context: 4096,
  seed: 17,
};

export const SMALL_LLAMA: LlamaShape = {
  embedding: 512,
  layers: 8,
  heads: 8,
  kvHeads: 4,
  feedForward: 1536,
  context: 4096,
  seed: 23,
  quietEos: true,
};

// GGUF metadata value types and token types, as llama.cpp numbers them.
const T_UINT32 = 4;
const T_INT32 = 5;
const T_FLOAT32 = 6;
const T_BOOL = 7;
const T_STRING = 8;
const T_ARRAY = 9;
const TOKEN_NORMAL = 1;
const TOKEN_UNKNOWN = 2;
const TOKEN_CONTROL = 3;
const TOKEN_BYTE = 6;
const GGML_F32 = 0;
const ALIGNMENT = 32;

/** The control tokens, in vocabulary order after `<unk>`. */
export const CONTROL_TOKENS = ["<s>", "</s>", "<|im_start|>", "<|im_end|>"] as const;

// ChatML, the format of the Qwen instruct models; written for this file, not copied from any model.
const CHAT_TEMPLATE =
  "{% for message in messages %}" +
  "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}" +
  "{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
  bos: number;
  eos: number;
}

/** `<unk>`, the control tokens, the 256 byte tokens, then "▁" and every printable ASCII character. */
export function llamaVocabulary(): Vocabulary {
  const tokens: string[] = ["<unk>", ...CONTROL_TOKENS];
  const types: number[] = [TOKEN_UNKNOWN, ...CONTROL_TOKENS.map(() => TOKEN_CONTROL)];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TOKEN_BYTE);
  }
  // SentencePiece writes a space as "▁"; the other printable characters are themselves.
  tokens.push("▁");
  types.push(TOKEN_NORMAL);
  for (let c = 0x21; c <= 0x7e; c++) {
    tokens.push(String.fromCharCode(c));
    types.push(TOKEN_NORMAL);
  }
  const scores = tokens.map((_, i) => (types[i] === TOKEN_NORMAL ? -i / 1000 : 0));
  return { tokens, scores, types, bos: 1, eos: tokens.indexOf("<|im_end|>") };
}

interface Tensor {
  name: string;
  /** ggml order: the fastest-varying dimension first */
  dims: number[];
  data: Float32Array;
}

function tensors(shape: LlamaShape, vocabSize: number, quiet: readonly number[]): Tensor[] {
  // seeded: the same shape always gives the same bytes
  const next = seededRandom(shape.seed);
  const headDim = shape.embedding / shape.heads;
  const kvWidth = headDim * shape.kvHeads;
  const filled = (name: string, dims: number[], scale: number): Tensor => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = (next() * 2 - 1) * scale;
    return { name, dims, data };
  };
  const ones = (name: string, n: number): Tensor => ({ name, dims: [n], data: new Float32Array(n).fill(1) });
  const e = shape.embedding;
  // Scales keep activations near unit size so the logits vary with the context (not one token forever).
  const out: Tensor[] = [filled("token_embd.weight", [e, vocabSize], 1)];
  for (let l = 0; l < shape.layers; l++) {
    const w = 1 / Math.sqrt(e);
    out.push(
      ones(`blk.${l}.attn_norm.weight`, e),
      filled(`blk.${l}.attn_q.weight`, [e, e], w),
      filled(`blk.${l}.attn_k.weight`, [e, kvWidth], w),
      filled(`blk.${l}.attn_v.weight`, [e, kvWidth], w),
      filled(`blk.${l}.attn_output.weight`, [e, e], w),
      ones(`blk.${l}.ffn_norm.weight`, e),
      filled(`blk.${l}.ffn_gate.weight`, [e, shape.feedForward], w),
      filled(`blk.${l}.ffn_up.weight`, [e, shape.feedForward], w),
      filled(`blk.${l}.ffn_down.weight`, [shape.feedForward, e], 1 / Math.sqrt(shape.feedForward)),
    );
  }
  const output = filled("output.weight", [e, vocabSize], 2 / Math.sqrt(e));
  if (shape.quietEos) {
    // Every token embedding carries a large constant in dimension 0, which survives the (small)
    // layers and the final norm as a large positive value; the rows of the tokens that end a turn
    // (llama.cpp ends on `</s>` as well as on the template's `<|im_end|>`) weigh it negatively.
    const embeddings = out[0]!.data;
    for (let t = 0; t < vocabSize; t++) embeddings[t * e] = 8;
    for (const t of quiet) output.data[t * e] = -8;
  }
  out.push(ones("output_norm.weight", e), output);
  return out;
}

/** Appends little-endian GGUF values to a growing list of chunks. */
class GgufWriter {
  private readonly chunks: Buffer[] = [];
  length = 0;

  private push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  bytes(b: Buffer): void {
    this.push(b);
  }
  string(s: string): void {
    const b = Buffer.from(s, "utf8");
    this.u64(b.length);
    this.push(b);
  }
  pad(): void {
    const extra = (ALIGNMENT - (this.length % ALIGNMENT)) % ALIGNMENT;
    if (extra > 0) this.push(Buffer.alloc(extra));
  }
  concat(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

type MetaValue =
  | { type: "u32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "strings"; value: string[] }
  | { type: "f32s"; value: number[] }
  | { type: "i32s"; value: number[] };

function writeMeta(w: GgufWriter, key: string, v: MetaValue): void {
  w.string(key);
  switch (v.type) {
    case "u32":
      w.u32(T_UINT32);
      w.u32(v.value);
      return;
    case "f32":
      w.u32(T_FLOAT32);
      w.f32(v.value);
      return;
    case "bool":
      w.u32(T_BOOL);
      w.bytes(Buffer.from([v.value ? 1 : 0]));
      return;
    case "string":
      w.u32(T_STRING);
      w.string(v.value);
      return;
    case "strings":
      writeArray(w, T_STRING, v.value, (s) => w.string(s));
      return;
    case "f32s":
      writeArray(w, T_FLOAT32, v.value, (x) => w.f32(x));
      return;
    case "i32s":
      writeArray(w, T_INT32, v.value, (x) => w.i32(x));
      return;
  }
}

/** An array value: its element type, its length, then each element as `write` puts it. */
function writeArray<T>(
  w: GgufWriter,
  elementType: number,
  values: readonly T[],
  write: (value: T) => void,
): void {
  w.u32(T_ARRAY);
  w.u32(elementType);
  w.u64(values.length);
  for (const value of values) write(value);
}

/** The whole GGUF file of a random llama model of this shape. */
export function llamaGguf(shape: LlamaShape = TINY_LLAMA, name = "tiny-random-llama"): Buffer {
  const vocab = llamaVocabulary();
  const ends = CONTROL_TOKENS.filter((t) => t !== "<s>").map((t) => vocab.tokens.indexOf(t));
  const all = tensors(shape, vocab.tokens.length, ends);
  const meta: [string, MetaValue][] = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: name }],
    ["general.alignment", { type: "u32", value: ALIGNMENT }],
    ["general.file_type", { type: "u32", value: 0 }],
    ["llama.context_length", { type: "u32", value: shape.context }],
    ["llama.embedding_length", { type: "u32", value: shape.embedding }],
    ["llama.block_count", { type: "u32", value: shape.layers }],
    ["llama.feed_forward_length", { type: "u32", value: shape.feedForward }],
    ["llama.attention.head_count", { type: "u32", value: shape.heads }],
    ["llama.attention.head_count_kv", { type: "u32", value: shape.kvHeads }],
    ["llama.attention.layer_norm_rms_epsilon", { type: "f32", value: 1e-5 }],
    ["llama.rope.dimension_count", { type: "u32", value: shape.embedding / shape.heads }],
    ["llama.rope.freq_base", { type: "f32", value: 10000 }],
    ["llama.vocab_size", { type: "u32", value: vocab.tokens.length }],
    ["tokenizer.ggml.model", { type: "string", value: "llama" }],
    ["tokenizer.ggml.tokens", { type: "strings", value: vocab.tokens }],
    ["tokenizer.ggml.scores", { type: "f32s", value: vocab.scores }],
    ["tokenizer.ggml.token_type", { type: "i32s", value: vocab.types }],
    ["tokenizer.ggml.bos_token_id", { type: "u32", value: vocab.bos }],
    ["tokenizer.ggml.eos_token_id", { type: "u32", value: vocab.eos }],
    ["tokenizer.ggml.unknown_token_id", { type: "u32", value: 0 }],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: false }],
    ["tokenizer.ggml.add_space_prefix", { type: "bool", value: false }],
    ["tokenizer.chat_template", { type: "string", value: CHAT_TEMPLATE }],
  ];
  const w = new GgufWriter();
  w.bytes(Buffer.from("GGUF", "ascii"));
  w.u32(3);
  w.u64(all.length);
  w.u64(meta.length);
  for (const [key, value] of meta) writeMeta(w, key, value);
  let offset = 0;
  const offsets: number[] = [];
  for (const t of all) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_F32);
    w.u64(offset);
    offsets.push(offset);
    offset += Math.ceil(t.data.byteLength / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();
  for (const t of all) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  return w.concat();
}

/** Writes the GGUF file (and its directory); returns its path. */
export function writeLlamaGguf(file: string, shape: LlamaShape = TINY_LLAMA): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, llamaGguf(shape));
  return file;
}
