// A BERT encoder with random weights, written as a model directory in the layout the hub's
// transformers.js models have (`config.json`, `tokenizer.json`, `tokenizer_config.json`,
// `onnx/model.onnx`), so tests and benchmarks load it through exactly the code path a real sentence
// model takes, offline. `TINY_BERT` is small enough to build in milliseconds; `BERT_BASE_SHAPE` has
// BERT-base's sizes (12 layers, 768 wide, 110M weights) for timing.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { encodeModel, FLOAT, INT64, type Initializer, type Node } from "./onnx-proto.js";

export interface BertShape {
  layers: number;
  hidden: number;
  heads: number;
  intermediate: number;
  /** longest input in tokens (position embeddings) */
  maxPosition: number;
  /** words of the WordPiece vocabulary besides the special tokens and `##` pieces */
  words: readonly string[];
  /** extra filler tokens to reach a real vocabulary's size (embedding table size only) */
  padVocabTo?: number;
  /** words whose embedding row is NaN: any text containing one makes the model answer NaN */
  nanWords?: readonly string[];
  seed?: number;
}

const SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] as const;

/** A small English and code vocabulary: enough that the sample queries tokenize into real pieces. */
export const TEST_WORDS: readonly string[] = (
  "a an the of to in on for with and or not is are be by as at it this that from write function " +
  "python java javascript c code program list array string number numbers sum sort sorted reverse " +
  "find return given input output file read print class method data value values key dict map set " +
  "tree node graph path matrix binary search prime even odd max min count word words character " +
  "create implement using use how what which can you your my make test tests error fix bug loop " +
  "recursive recursion integer integers float type types query sql table database web api server " +
  "json parse url request http user name age date time " +
  ". , ( ) [ ] { } : ; ' \" = + - * / < > ! ? _ # 0 1 2 3 4 5 6 7 8 9"
).split(" ");
const SUFFIXES = ["s", "ing", "ed", "er", "ly", "tion", "e", "y"];

export const TINY_BERT: BertShape = {
  layers: 2,
  hidden: 32,
  heads: 4,
  intermediate: 64,
  maxPosition: 64,
  words: TEST_WORDS,
  seed: 7,
};

export const BERT_BASE_SHAPE: BertShape = {
  layers: 12,
  hidden: 768,
  heads: 12,
  intermediate: 3072,
  maxPosition: 512,
  words: TEST_WORDS,
  padVocabTo: 30_522,
  seed: 11,
};

/** The vocabulary in id order: special tokens, words, `##` suffixes and letters, filler. */
export function vocabulary(shape: BertShape): string[] {
  const vocab: string[] = [...SPECIAL];
  const seen = new Set(vocab);
  const add = (t: string) => {
    if (!seen.has(t)) {
      seen.add(t);
      vocab.push(t);
    }
  };
  for (const w of shape.words) add(w);
  for (const w of shape.nanWords ?? []) add(w);
  for (const c of "abcdefghijklmnopqrstuvwxyz0123456789") {
    add(c);
    add(`##${c}`);
  }
  for (const s of SUFFIXES) add(`##${s}`);
  for (let i = 0; vocab.length < (shape.padVocabTo ?? 0); i++) add(`[unused${i}]`);
  return vocab;
}

/** Deterministic uniform noise (xorshift32), scaled like a trained layer's weights. */
function randomTensor(name: string, dims: number[], state: { s: number }, scale: number): Initializer {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  let s = state.s;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    data[i] = ((s >>> 0) / 4294967296 - 0.5) * 2 * scale;
  }
  state.s = s;
  return { name, dims, type: FLOAT, data };
}

function constant(name: string, values: number[], type = FLOAT): Initializer {
  return {
    name,
    dims: values.length === 1 && type === FLOAT ? [] : [values.length],
    type,
    data: type === FLOAT ? Float32Array.from(values) : BigInt64Array.from(values.map(BigInt)),
  };
}

/** The ONNX graph of a BERT encoder: inputs `input_ids`, `attention_mask`, `token_type_ids`. */
export function bertOnnx(shape: BertShape): Uint8Array {
  const { hidden: h, heads, intermediate, layers } = shape;
  const vocabSize = vocabulary(shape).length;
  const state = { s: shape.seed ?? 1 };
  const nodes: Node[] = [];
  const inits: Initializer[] = [];
  const w = (name: string, dims: number[], scale = 0.08) => {
    inits.push(randomTensor(name, dims, state, scale));
    return name;
  };
  const ones = (name: string, n: number) => {
    inits.push({ name, dims: [n], type: FLOAT, data: new Float32Array(n).fill(1) });
    return name;
  };
  let counter = 0;
  const op = (type: string, inputs: string[], attributes?: Node["attributes"]) => {
    const out = `${type.toLowerCase()}_${counter++}`;
    nodes.push({ op: type, inputs, outputs: [out], ...(attributes ? { attributes } : {}) });
    return out;
  };
  const layerNorm = (x: string, prefix: string) =>
    op(
      "LayerNormalization",
      [x, ones(`${prefix}.gamma`, h), w(`${prefix}.beta`, [h], 0.01)],
      [
        { name: "axis", i: -1 },
        { name: "epsilon", f: 1e-12 },
      ],
    );
  const dense = (x: string, prefix: string, from: number, to: number) =>
    op("Add", [op("MatMul", [x, w(`${prefix}.weight`, [from, to])]), w(`${prefix}.bias`, [to], 0.01)]);

  inits.push(
    constant("zero_i64", [0], INT64),
    constant("heads_shape", [0, 0, heads, h / heads], INT64),
    constant("merge_shape", [0, 0, h], INT64),
    constant("one_f", [1]),
    constant("neg_big", [-10000]),
    constant("scale", [1 / Math.sqrt(h / heads)]),
    constant("half", [0.5]),
    constant("inv_sqrt2", [Math.SQRT1_2]),
  );

  // Embeddings: word + position (the first `sequence` rows of the table) + token type.
  const words = op("Gather", [w("embeddings.word", [vocabSize, h]), "input_ids"]);
  const table = inits[inits.length - 1]!.data as Float32Array;
  const vocab = vocabulary(shape);
  for (const word of shape.nanWords ?? []) {
    const id = vocab.indexOf(word);
    if (id < 0) throw new Error(`nanWords: ${word} is not in the vocabulary`);
    table.fill(Number.NaN, id * h, (id + 1) * h);
  }
  const seqLen = op(
    "Shape",
    ["input_ids"],
    [
      { name: "start", i: 1 },
      { name: "end", i: 2 },
    ],
  );
  const positions = op("Slice", [w("embeddings.position", [shape.maxPosition, h]), "zero_i64", seqLen]);
  const types = op("Gather", [w("embeddings.token_type", [2, h]), "token_type_ids"]);
  let x = layerNorm(op("Add", [op("Add", [words, positions]), types]), "embeddings.norm");

  // Padding positions get -10000 before the softmax, as BERT's extended attention mask does.
  const maskF = op("Cast", ["attention_mask"], [{ name: "to", i: FLOAT }]);
  const maskAdd = op("Mul", [op("Sub", ["one_f", maskF]), "neg_big"]);
  const mask4 = op("Unsqueeze", [maskAdd, constantInts(inits, "mask_axes", [1, 2])]);

  for (let l = 0; l < layers; l++) {
    const p = `layer${l}`;
    const split = (t: string, perm: number[]) =>
      op("Transpose", [op("Reshape", [t, "heads_shape"])], [{ name: "perm", ints: perm }]);
    const q = split(dense(x, `${p}.query`, h, h), [0, 2, 1, 3]);
    const k = split(dense(x, `${p}.key`, h, h), [0, 2, 3, 1]);
    const v = split(dense(x, `${p}.value`, h, h), [0, 2, 1, 3]);
    const scores = op("Add", [op("Mul", [op("MatMul", [q, k]), "scale"]), mask4]);
    const probs = op("Softmax", [scores], [{ name: "axis", i: -1 }]);
    const context = op("Reshape", [
      op("Transpose", [op("MatMul", [probs, v])], [{ name: "perm", ints: [0, 2, 1, 3] }]),
      "merge_shape",
    ]);
    x = layerNorm(op("Add", [dense(context, `${p}.attention_out`, h, h), x]), `${p}.attention_norm`);
    const up = dense(x, `${p}.intermediate`, h, intermediate);
    // GELU, exact form: x * 0.5 * (1 + erf(x / sqrt 2))
    const gelu = op("Mul", [
      op("Mul", [up, "half"]),
      op("Add", [op("Erf", [op("Mul", [up, "inv_sqrt2"])]), "one_f"]),
    ]);
    x = layerNorm(op("Add", [dense(gelu, `${p}.output`, intermediate, h), x]), `${p}.output_norm`);
  }
  nodes.push({ op: "Identity", inputs: [x], outputs: ["last_hidden_state"] });

  return encodeModel({
    name: "bert",
    nodes,
    initializers: inits,
    inputs: [
      { name: "input_ids", type: INT64, shape: ["batch_size", "sequence_length"] },
      { name: "attention_mask", type: INT64, shape: ["batch_size", "sequence_length"] },
      { name: "token_type_ids", type: INT64, shape: ["batch_size", "sequence_length"] },
    ],
    outputs: [{ name: "last_hidden_state", type: FLOAT, shape: ["batch_size", "sequence_length", h] }],
    opset: 17,
  });
}

function constantInts(inits: Initializer[], name: string, values: number[]): string {
  inits.push(constant(name, values, INT64));
  return name;
}

/** `tokenizer.json` of a BERT WordPiece tokenizer (lowercasing, accents stripped, [CLS] ... [SEP]). */
export function bertTokenizerJson(shape: BertShape): unknown {
  const vocab = vocabulary(shape);
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content) => ({
      id: vocab.indexOf(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(
        ["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [vocab.indexOf(t)], tokens: [t] }]),
      ),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}

/** Writes the model directory; returns its path. */
export function writeBertModel(dir: string, shape: BertShape = TINY_BERT): string {
  mkdirSync(path.join(dir, "onnx"), { recursive: true });
  const vocabSize = vocabulary(shape).length;
  writeFileSync(
    path.join(dir, "config.json"),
    JSON.stringify({
      architectures: ["BertModel"],
      model_type: "bert",
      hidden_size: shape.hidden,
      num_attention_heads: shape.heads,
      num_hidden_layers: shape.layers,
      intermediate_size: shape.intermediate,
      max_position_embeddings: shape.maxPosition,
      type_vocab_size: 2,
      vocab_size: vocabSize,
      hidden_act: "gelu",
      layer_norm_eps: 1e-12,
    }),
  );
  writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(bertTokenizerJson(shape)));
  writeFileSync(
    path.join(dir, "tokenizer_config.json"),
    JSON.stringify({
      tokenizer_class: "BertTokenizer",
      do_lower_case: true,
      model_max_length: shape.maxPosition,
      cls_token: "[CLS]",
      sep_token: "[SEP]",
      pad_token: "[PAD]",
      unk_token: "[UNK]",
      mask_token: "[MASK]",
    }),
  );
  writeFileSync(path.join(dir, "onnx", "model.onnx"), bertOnnx(shape));
  return dir;
}
