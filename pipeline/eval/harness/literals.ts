// Pieces every harness needs to write values as source code: one walk over the schema type that a
// language fills in with its own spelling of each kind (a "dialect"), string and character escaping
// in the style of each language family, and numbers that keep their floating-point-ness.
import { type LeafKind, parseMapKey, type SchemaType } from "../schema-type.js";
import { type LiteralRenderer, UnsupportedTypeError } from "./harness.js";

type ListType = Extract<SchemaType, { kind: "list" }>;
type SetType = Extract<SchemaType, { kind: "set" }>;
type MapType = Extract<SchemaType, { kind: "map" }>;

/** How a language's container types wrap the names of theirs. */
interface ContainerNames {
  list(element: string): string;
  set(element: string): string;
  map(key: string, value: string): string;
}

type LeafNames = [
  boolean: string,
  integer: string,
  long: string,
  float: string,
  double: string,
  character: string,
  string: string,
];
const LEAF_ORDER = ["boolean", "integer", "long", "float", "double", "character", "string"] as const;

/**
 * A language's namer of the grammar's types (`map<string;list<integer>>` -> `map<string,vector<int>>`),
 * from its names of the leaves and of the containers.
 */
export function typeNamer(leaves: LeafNames, containers: ContainerNames): (type: SchemaType) => string {
  const leaf = Object.fromEntries(LEAF_ORDER.map((kind, i) => [kind, leaves[i]])) as Record<LeafKind, string>;
  const name = (type: SchemaType): string => {
    switch (type.kind) {
      case "list":
        return containers.list(name(type.element));
      case "set":
        return containers.set(name(type.element));
      case "map":
        return containers.map(name(type.key), name(type.value));
      default:
        return leaf[type.kind];
    }
  };
  return name;
}

/** How a language writes each kind of value; containers get their items already written. */
export interface LiteralDialect {
  boolean(value: boolean): string;
  integer(value: number): string;
  long(value: number): string;
  float(value: number): string;
  double(value: number): string;
  character(value: string): string;
  string(value: string): string;
  list(items: string[], type: ListType): string;
  set(items: string[], type: SetType): string;
  map(entries: Array<[key: string, value: string]>, type: MapType): string;
}

/** A test value (checked against its type when the question was read) as a literal of the dialect. */
function renderLiteral(value: unknown, type: SchemaType, dialect: LiteralDialect): string {
  switch (type.kind) {
    case "boolean":
      return dialect.boolean(value as boolean);
    case "integer":
    case "long":
    case "float":
    case "double":
      return dialect[type.kind](value as number);
    case "character":
    case "string":
      return dialect[type.kind](value as string);
    case "list":
    case "set": {
      const items = (value as unknown[]).map((item) => renderLiteral(item, type.element, dialect));
      return type.kind === "list" ? dialect.list(items, type) : dialect.set(items, type);
    }
    case "map":
      return dialect.map(
        mapEntries(value, type).map(([key, item]) => [
          renderLiteral(key, type.key, dialect),
          renderLiteral(item, type.value, dialect),
        ]),
        type,
      );
  }
}

/**
 * The renderer of a dialect, whose left-out kinds are written the common way: `true`, numbers as
 * they are (floating-point ones as such, "2.0"), a character as a string, a list as `[a, b]`.
 */
export function literals(
  given: Partial<LiteralDialect> & Pick<LiteralDialect, "string" | "set" | "map">,
): LiteralRenderer {
  const dialect: LiteralDialect = {
    boolean: (b) => (b ? "true" : "false"),
    integer: String,
    long: String,
    float: floatText,
    double: floatText,
    character: given.string,
    list: (items) => `[${items.join(", ")}]`,
    ...given,
  };
  return (value, type) => renderLiteral(value, type, dialect);
}

/**
 * The schema type as a value of the language, for drivers that compare by walking it: `record`
 * writes one level from its fields (`kind`, then `element`, or `key` and `value`), `text` the kind.
 */
export function typeRecord(
  type: SchemaType,
  record: (fields: Array<[name: string, value: string]>) => string,
  text: (kind: string) => string,
): string {
  const kind: [string, string] = ["kind", text(type.kind)];
  switch (type.kind) {
    case "list":
    case "set":
      return record([kind, ["element", typeRecord(type.element, record, text)]]);
    case "map":
      return record([
        kind,
        ["key", typeRecord(type.key, record, text)],
        ["value", typeRecord(type.value, record, text)],
      ]);
    default:
      return record([kind]);
  }
}

/** The suffixes and escaping of the C-like languages, and the largest code point their char holds. */
const C_LIKE = {
  C: { style: "c", long: "LL", float: "f", double: "", char: 0x7f },
  "C++": { style: "c", long: "LL", float: "f", double: "", char: 0x7f },
  Java: { style: "java", long: "L", float: "f", double: "", char: 0xffff },
  Scala: { style: "java", long: "L", float: "F", double: "", char: 0xffff },
  "C#": { style: "csharp", long: "L", float: "f", double: "m", char: 0xffff },
} as const;

/** How a C-like language writes the scalar kinds: `5LL` (`5L`), `2.0f` (`2.0F`), `2.0` (C#'s decimal `2.0m`), `'c'`. */
export function cLikeScalars(
  language: keyof typeof C_LIKE,
): Pick<LiteralDialect, "integer" | "long" | "float" | "double" | "character" | "string"> {
  const { style, long, float, double, char } = C_LIKE[language];
  return {
    // C's -2147483648 is unary minus on a long literal; INT_MIN spelled so keeps the type int.
    integer: (n) => (style === "c" && n === -(2 ** 31) ? "(-2147483647 - 1)" : String(n)),
    long: (n) => `${n}${long}`,
    float: (x) => `${floatText(x)}${float}`,
    double: (x) => `${floatText(x)}${double}`,
    character(c) {
      if (c.codePointAt(0)! > char) {
        const holds = char === 0x7f ? "one byte" : "one UTF-16 unit";
        throw new UnsupportedTypeError(
          `${language} char holds ${holds}; character ${JSON.stringify(c)} does not fit`,
        );
      }
      return quote(c, style, "'");
    },
    string: (s) => quote(s, style),
  };
}

/** How a language writes a character that cannot appear raw between quotes. */
type EscapeStyle = "c" | "java" | "go" | "rust" | "csharp" | "js";

const SIMPLE: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeControl(code: number, style: EscapeStyle): string {
  switch (style) {
    case "c":
    case "java":
      // Octal stops after three digits (C's \x would swallow following hex digits; Java's \u is
      // decoded before lexing, so \u000a would end the literal).
      return `\\${code.toString(8).padStart(3, "0")}`;
    case "go":
    case "rust":
      return `\\x${code.toString(16).padStart(2, "0")}`;
    case "csharp":
    case "js":
      return `\\u${code.toString(16).padStart(4, "0")}`;
  }
}

/** `text` between `quote`s, escaped for `style`; non-ASCII characters stay as UTF-8. */
export function quote(text: string, style: EscapeStyle, quoteChar = '"'): string {
  let out = quoteChar;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === quoteChar) out += `\\${ch}`;
    else if (SIMPLE[ch]) out += SIMPLE[ch];
    else if (code < 0x20 || code === 0x7f) out += escapeControl(code, style);
    else if (style === "js" && (code === 0x2028 || code === 0x2029)) out += escapeControl(code, style);
    else out += ch;
  }
  return out + quoteChar;
}

/** PHP, Ruby and Perl single-quoted strings: only `\` and `'` need escaping, nothing is interpolated. */
export function singleQuoted(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** A number that reads back as floating point in every C-like language ("2.0", not "2"). */
export function floatText(value: number): string {
  const text = String(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** A map value's entries with keys read back in the key type (numbers for integer keys). */
function mapEntries(value: unknown, type: MapType): Array<[unknown, unknown]> {
  return Object.entries(value as Record<string, unknown>).map(([key, item]) => [
    parseMapKey(key, type.key.kind),
    item,
  ]);
}

/** Indents every line of `text` but the first by `spaces`. */
export function indentRest(text: string, spaces: number): string {
  return text.replace(/\n/g, `\n${" ".repeat(spaces)}`);
}
