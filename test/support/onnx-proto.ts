// Just enough of the protobuf wire format to write an ONNX model file: the tests and benchmarks build
// their BERT graphs with it, so no model file is checked in and none is downloaded. Field numbers are
// those of onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto, AttributeProto).

/** A protobuf message under construction: fields appended in any order, length-delimited on `bytes()`. */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  private push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    const out: number[] = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.varint(value.length);
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, value: ProtoWriter): this {
    return this.bytes(field, value.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export const FLOAT = 1;
export const INT64 = 7;

export type Attribute =
  | { name: string; i: number }
  | { name: string; f: number }
  | { name: string; ints: number[] };

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: Attribute[];
}

export interface Initializer {
  name: string;
  dims: number[];
  /** FLOAT or INT64 */
  type: number;
  data: Float32Array | BigInt64Array;
}

export interface ValueInfo {
  name: string;
  type: number;
  /** a number is a fixed size, a string a symbolic one (batch, sequence) */
  shape: (number | string)[];
}

function attribute(a: Attribute): ProtoWriter {
  const w = new ProtoWriter().string(1, a.name);
  if ("i" in a) return w.int(3, a.i).int(20, 2);
  if ("f" in a) return w.float(2, a.f).int(20, 1);
  for (const v of a.ints) w.int(8, v);
  return w.int(20, 7);
}

function tensor(t: Initializer): ProtoWriter {
  const w = new ProtoWriter();
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.type).string(8, t.name);
  return w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

function valueInfo(v: ValueInfo): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of v.shape) {
    shape.message(1, typeof d === "number" ? new ProtoWriter().int(1, d) : new ProtoWriter().string(2, d));
  }
  const tensorType = new ProtoWriter().int(1, v.type).message(2, shape);
  return new ProtoWriter().string(1, v.name).message(2, new ProtoWriter().message(1, tensorType));
}

/** A whole ModelProto (IR 8, default domain at `opset`). */
export function encodeModel(graph: {
  name: string;
  nodes: Node[];
  initializers: Initializer[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  opset: number;
}): Uint8Array {
  const g = new ProtoWriter();
  for (const [i, n] of graph.nodes.entries()) {
    const node = new ProtoWriter();
    for (const input of n.inputs) node.string(1, input);
    for (const output of n.outputs) node.string(2, output);
    node.string(3, `${n.op}_${i}`).string(4, n.op);
    for (const a of n.attributes ?? []) node.message(5, attribute(a));
    g.message(1, node);
  }
  g.string(2, graph.name);
  for (const t of graph.initializers) g.message(5, tensor(t));
  for (const v of graph.inputs) g.message(11, valueInfo(v));
  for (const v of graph.outputs) g.message(12, valueInfo(v));
  return new ProtoWriter()
    .int(1, 8)
    .string(2, "codefeedback-test")
    .message(7, g)
    .message(8, new ProtoWriter().string(1, "").int(2, graph.opset))
    .finish();
}
