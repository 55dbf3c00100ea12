// BabelCode's generic type grammar, parsed into a tree every harness renders from:
//   S    => Leaf | list<S> | set<Core> | map<Core;S>
//   Leaf => Core | boolean | double | float | long
//   Core => character | integer | string
// and the checks that a JSON test value really has the type its schema claims.

export type CoreKind = "character" | "integer" | "string";
export type LeafKind = CoreKind | "boolean" | "double" | "float" | "long";

export type SchemaType =
  | { kind: LeafKind }
  | { kind: "list"; element: SchemaType }
  | { kind: "set"; element: { kind: CoreKind } }
  | { kind: "map"; key: { kind: CoreKind }; value: SchemaType };

const CORE: readonly string[] = ["character", "integer", "string"];
const LEAF: readonly string[] = [...CORE, "boolean", "double", "float", "long"];

/** The question is malformed: a type outside the grammar or a value that does not fit its type. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaError";
  }
}

/** Parses "map<string;list<integer>>" into a SchemaType; throws SchemaError naming what is wrong. */
export function parseSchemaType(text: string): SchemaType {
  const source = text.replace(/\s+/g, "");
  let pos = 0;
  const fail = (what: string): never => {
    throw new SchemaError(
      `type "${text}": ${what} at character ${pos + 1}; the grammar is S => Leaf | list<S> | set<Core> | map<Core;S>`,
    );
  };
  const word = (): string => {
    const match = /^[a-z]+/.exec(source.slice(pos));
    if (!match) fail("expected a type name");
    pos += match![0].length;
    return match![0];
  };
  const expect = (ch: string) => {
    if (source[pos] !== ch) fail(`expected "${ch}"`);
    pos++;
  };
  const core = (container: string): { kind: CoreKind } => {
    const start = pos;
    const name = word();
    if (!CORE.includes(name)) {
      pos = start;
      fail(`${container} keys must be character, integer or string, not "${name}"`);
    }
    return { kind: name as CoreKind };
  };
  const parse = (): SchemaType => {
    const start = pos;
    const name = word();
    if (name === "list") {
      expect("<");
      const element = parse();
      expect(">");
      return { kind: "list", element };
    }
    if (name === "set") {
      expect("<");
      const element = core("set");
      expect(">");
      return { kind: "set", element };
    }
    if (name === "map") {
      expect("<");
      const key = core("map");
      expect(";");
      const value = parse();
      expect(">");
      return { kind: "map", key, value };
    }
    if (!LEAF.includes(name)) {
      pos = start;
      fail(`unknown type "${name}"`);
    }
    return { kind: name as LeafKind };
  };
  const type = parse();
  if (pos !== source.length) fail("unexpected text after the type");
  return type;
}

export function formatSchemaType(type: SchemaType): string {
  switch (type.kind) {
    case "list":
      return `list<${formatSchemaType(type.element)}>`;
    case "set":
      return `set<${type.element.kind}>`;
    case "map":
      return `map<${type.key.kind};${formatSchemaType(type.value)}>`;
    default:
      return type.kind;
  }
}

/** Tolerance for comparing a returned value of this type: 1e-6 for float, 1e-9 for double, else exact. */
export function tolerance(type: SchemaType): number {
  const text = formatSchemaType(type);
  if (/\bfloat\b/.test(text)) return 1e-6;
  return /\bdouble\b/.test(text) ? 1e-9 : 0;
}

const INT32 = 2 ** 31;

/**
 * Throws SchemaError if `value` (parsed JSON) does not have `type`; `where` names it in the message.
 * Map keys stay strings (JSON's) and are checked against the key kind.
 */
export function checkValue(value: unknown, type: SchemaType, where: string): void {
  const fail = (expected: string): never => {
    throw new SchemaError(`${where}: expected ${expected}, got ${JSON.stringify(value)}`);
  };
  switch (type.kind) {
    case "integer":
      if (!Number.isInteger(value) || (value as number) < -INT32 || (value as number) >= INT32) {
        fail("a 32-bit integer (use type long for larger values)");
      }
      return;
    case "long":
      if (!Number.isSafeInteger(value)) fail("an integer within ±2^53 (JSON numbers lose precision beyond)");
      return;
    case "float":
    case "double":
      if (typeof value !== "number" || !Number.isFinite(value)) fail(`a finite number (${type.kind})`);
      return;
    case "boolean":
      if (typeof value !== "boolean") fail("true or false");
      return;
    case "character":
      if (typeof value !== "string" || [...value].length !== 1) fail("a one-character string");
      return;
    case "string":
      if (typeof value !== "string") fail("a string");
      return;
    case "list":
    case "set":
      if (!Array.isArray(value)) fail(`a JSON array (${formatSchemaType(type)})`);
      (value as unknown[]).forEach((item, i) => {
        checkValue(item, type.element, `${where}[${i}]`);
      });
      if (type.kind === "set" && new Set(value as unknown[]).size !== (value as unknown[]).length) {
        fail("a set without repeated elements");
      }
      return;
    case "map": {
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        fail(`a JSON object (${formatSchemaType(type)})`);
      }
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        checkValue(parseMapKey(key, type.key.kind, where), type.key, `${where} key ${JSON.stringify(key)}`);
        checkValue(item, type.value, `${where}[${JSON.stringify(key)}]`);
      }
      return;
    }
  }
}

/** JSON object keys are strings; an integer-keyed map's keys are read back as numbers. */
export function parseMapKey(key: string, kind: CoreKind, where = "map"): string | number {
  if (kind !== "integer") return key;
  if (!/^-?\d+$/.test(key))
    throw new SchemaError(`${where}: map key ${JSON.stringify(key)} is not an integer`);
  return Number(key);
}
