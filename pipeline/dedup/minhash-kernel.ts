// MinHash's inner loop as a WebAssembly SIMD function, built at start-up from its instructions: for
// every permutation, the minimum over the shingles of one round of xor-multiply-xorshift. Sixteen
// permutations (four 128-bit vectors) share each pass over the shingles; the same loop in JavaScript
// costs several times the instructions. WebAssembly SIMD is on in every Node this project supports.

/** Permutations per pass over the shingles: four vectors of four 32-bit lanes. */
const PERMUTATIONS_PER_PASS = 16;
const VECTORS = PERMUTATIONS_PER_PASS / 4;
const PARAM_BYTES_PER_PASS = 2 * 4 * PERMUTATIONS_PER_PASS;
const OUT_BYTES_PER_PASS = 4 * PERMUTATIONS_PER_PASS;
const PAGE_BYTES = 65_536;

// the few opcodes the function uses (WebAssembly core and SIMD specifications)
const I32 = 0x7f;
const V128 = 0x7b;
const BLOCK = 0x02;
const LOOP = 0x03;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const EMPTY = 0x40;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I32_LOAD = 0x28;
const I32_CONST = 0x41;
const I32_GE_U = 0x4f;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const SIMD = 0xfd;
const V128_LOAD = 0x00;
const V128_STORE = 0x0b;
const V128_CONST = 0x0c;
const I32X4_SPLAT = 0x11;
const V128_XOR = 0x51;
const I32X4_SHR_U = 0xad;
const I32X4_MUL = 0xb5;
const I32X4_MIN_U = 0xb7;

/** Unsigned LEB128, as WebAssembly writes lengths, indices and SIMD opcodes. */
function uleb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

/** `i32.const value`: the value in signed LEB128. */
function i32Const(value: number): number[] {
  const bytes: number[] = [I32_CONST];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    const done = (value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0);
    bytes.push(done ? byte : byte | 0x80);
    if (done) return bytes;
  }
}

const simd = (op: number): number[] => [SIMD, ...uleb(op)];
const get = (local: number): number[] => [LOCAL_GET, local];
const set = (local: number): number[] => [LOCAL_SET, local];
const tee = (local: number): number[] => [LOCAL_TEE, local];
/** align 2^4, then the offset */
const vectorAt = (op: number, offset: number): number[] => [...simd(op), 4, ...uleb(offset)];

/**
 * The function, in the text format, abridged (each `v` is one of the four vectors, $p a local):
 *   (func (export "minima") (param $shingles i32) (param $end i32) (param $params i32)
 *                           (param $out i32) (param $passes i32)
 *     (loop $pass
 *       a[v] = v128.load($params + 16v)   b[v] = v128.load($params + 64 + 16v)   m[v] = all ones
 *       (loop $shingle  while $p < $end:
 *         x = i32x4.splat(i32.load $p)
 *         t = i32x4.mul(x xor b[v], a[v]);  m[v] = i32x4.min_u(m[v], t xor (t >>> 15))
 *         $p += 4)
 *       v128.store($out + 16v, m[v]);  $params += 128;  $out += 64
 *       (br_if $pass (--$passes != 0))))
 */
function minimaBody(): number[] {
  // parameters 0-4, then the locals: $p, a[4], b[4], m[4], x, t
  const [SHINGLES, END_AT, PARAMS, OUT, PASSES, P] = [0, 1, 2, 3, 4, 5];
  const a = (v: number) => 6 + v;
  const b = (v: number) => 6 + VECTORS + v;
  const m = (v: number) => 6 + 2 * VECTORS + v;
  const X = 6 + 3 * VECTORS;
  const T = X + 1;
  const code: number[] = [2, 1, I32, 3 * VECTORS + 2, V128];
  code.push(LOOP, EMPTY);
  for (let v = 0; v < VECTORS; v++) {
    code.push(...get(PARAMS), ...vectorAt(V128_LOAD, 16 * v), ...set(a(v)));
    code.push(...get(PARAMS), ...vectorAt(V128_LOAD, 16 * (VECTORS + v)), ...set(b(v)));
    code.push(...simd(V128_CONST), ...new Array<number>(16).fill(0xff), ...set(m(v)));
  }
  code.push(...get(SHINGLES), ...set(P));
  code.push(BLOCK, EMPTY, LOOP, EMPTY);
  code.push(...get(P), ...get(END_AT), I32_GE_U, BR_IF, 1);
  code.push(...get(P), I32_LOAD, 2, 0, ...simd(I32X4_SPLAT), ...set(X));
  for (let v = 0; v < VECTORS; v++) {
    code.push(...get(X), ...get(b(v)), ...simd(V128_XOR), ...get(a(v)), ...simd(I32X4_MUL), ...tee(T));
    code.push(...get(T), ...i32Const(15), ...simd(I32X4_SHR_U), ...simd(V128_XOR));
    code.push(...get(m(v)), ...simd(I32X4_MIN_U), ...set(m(v)));
  }
  code.push(...get(P), ...i32Const(4), I32_ADD, ...set(P), BR, 0, END, END);
  for (let v = 0; v < VECTORS; v++) code.push(...get(OUT), ...get(m(v)), ...vectorAt(V128_STORE, 16 * v));
  code.push(...get(PARAMS), ...i32Const(PARAM_BYTES_PER_PASS), I32_ADD, ...set(PARAMS));
  code.push(...get(OUT), ...i32Const(OUT_BYTES_PER_PASS), I32_ADD, ...set(OUT));
  code.push(...get(PASSES), ...i32Const(1), I32_SUB, ...tee(PASSES), BR_IF, 0, END, END);
  return code;
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

function name(text: string): number[] {
  return [...uleb(text.length), ...Array.from(text, (c) => c.charCodeAt(0))];
}

/** The module: one function `minima` and the memory it works in, both exported. */
function moduleBytes(): Uint8Array {
  const body = minimaBody();
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]), // type: (i32 x 5) -> ()
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(5, [1, 0, 1]), // one memory, at least one page
    ...section(7, [2, ...name("minima"), 0x00, 0, ...name("memory"), 0x02, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
  ]);
}

/** The part of Node's WebAssembly API used here (the project's TypeScript libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object) => { exports: Record<string, unknown> };
    };
  }
).WebAssembly;

type Minima = (shingles: number, end: number, params: number, out: number, passes: number) => void;

let compiled: object | undefined;

/**
 * Signatures for one set of permutations. Its memory holds the permutations' parameters (padded to
 * whole passes), then the minima, then the shingles of the text at hand, and grows with the largest
 * text seen.
 */
export class MinimaKernel {
  private readonly numPerm: number;
  private readonly passes: number;
  private readonly outAt: number;
  private readonly shinglesAt: number;
  private readonly memory: WasmMemory;
  private readonly minima: Minima;
  private words: Uint32Array;

  /** `multipliers[p]` and `offsets[p]` define permutation p: min over x of mix(imul(x ^ offset, multiplier)). */
  constructor(multipliers: Int32Array, offsets: Int32Array) {
    const numPerm = multipliers.length;
    this.numPerm = numPerm;
    // at least one pass: the loop runs its body before it counts the passes down
    this.passes = Math.max(1, Math.ceil(numPerm / PERMUTATIONS_PER_PASS));
    this.outAt = this.passes * PARAM_BYTES_PER_PASS;
    this.shinglesAt = this.outAt + this.passes * OUT_BYTES_PER_PASS;
    compiled ??= new wasm.Module(moduleBytes());
    const exports = new wasm.Instance(compiled).exports;
    this.memory = exports.memory as WasmMemory;
    this.minima = exports.minima as Minima;
    this.ensure(this.shinglesAt);
    this.words = new Uint32Array(this.memory.buffer);
    // each pass reads its 16 multipliers, then its 16 offsets; padding lanes compute unused minima
    for (let p = 0; p < numPerm; p++) {
      const pass = Math.floor(p / PERMUTATIONS_PER_PASS);
      const lane = p % PERMUTATIONS_PER_PASS;
      this.words[(pass * PARAM_BYTES_PER_PASS) / 4 + lane] = multipliers[p]!;
      this.words[(pass * PARAM_BYTES_PER_PASS) / 4 + PERMUTATIONS_PER_PASS + lane] = offsets[p]!;
    }
  }

  /** Writes the minimum of each permutation over `shingles` into `out` (0xffffffff for no shingles). */
  run(shingles: Uint32Array, out: Uint32Array): Uint32Array {
    const end = this.shinglesAt + 4 * shingles.length;
    if (end > this.words.byteLength) {
      this.ensure(end);
      this.words = new Uint32Array(this.memory.buffer);
    }
    this.words.set(shingles, this.shinglesAt / 4);
    this.minima(this.shinglesAt, end, 0, this.outAt, this.passes);
    out.set(this.words.subarray(this.outAt / 4, this.outAt / 4 + this.numPerm));
    return out;
  }

  private ensure(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE_BYTES));
  }
}
