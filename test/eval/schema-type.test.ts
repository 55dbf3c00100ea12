import { describe, expect, it } from "vitest";
import {
  checkValue,
  formatSchemaType,
  parseSchemaType,
  SchemaError,
  tolerance,
} from "../../pipeline/eval/schema-type.js";

describe("parseSchemaType", () => {
  it("parses every form of the grammar", () => {
    expect(parseSchemaType("integer")).toEqual({ kind: "integer" });
    expect(parseSchemaType("list<list<double>>")).toEqual({
      kind: "list",
      element: { kind: "list", element: { kind: "double" } },
    });
    expect(parseSchemaType("set<character>")).toEqual({ kind: "set", element: { kind: "character" } });
    expect(parseSchemaType(" map< string ; list<boolean> > ")).toEqual({
      kind: "map",
      key: { kind: "string" },
      value: { kind: "list", element: { kind: "boolean" } },
    });
  });

  it("round-trips through formatSchemaType", () => {
    for (const text of ["long", "float", "map<integer;map<character;set<string>>>", "list<set<integer>>"]) {
      expect(formatSchemaType(parseSchemaType(text))).toBe(text);
    }
  });

  it.each([
    ["set<double>", /set keys must be character, integer or string, not "double"/],
    ["map<list<integer>;string>", /map keys must be character, integer or string, not "list"/],
    ["tuple<integer>", /unknown type "tuple"/],
    ["list<integer", /expected ">"/],
    ["list<integer>>", /unexpected text after the type/],
    ["map<string,integer>", /expected ";"/],
  ])("rejects %s", (text, message) => {
    expect(() => parseSchemaType(text)).toThrow(SchemaError);
    expect(() => parseSchemaType(text)).toThrow(message);
  });
});

describe("checkValue", () => {
  const ok = (value: unknown, type: string) => () => checkValue(value, parseSchemaType(type), "x");

  it("accepts values of their type", () => {
    expect(ok(2147483647, "integer")).not.toThrow();
    expect(ok(10_000_000_000, "long")).not.toThrow();
    expect(ok(1, "double")).not.toThrow();
    expect(ok("é", "character")).not.toThrow();
    expect(ok({ "1": ["a"], "-2": [] }, "map<integer;list<string>>")).not.toThrow();
    expect(ok([["a", "b"]], "list<set<string>>")).not.toThrow();
  });

  it("names what is wrong and where", () => {
    expect(ok(2147483648, "integer")).toThrow(
      "x: expected a 32-bit integer (use type long for larger values), got 2147483648",
    );
    expect(ok(1.5, "long")).toThrow(/an integer within/);
    expect(ok("ab", "character")).toThrow("x: expected a one-character string");
    expect(ok([1, 1], "set<integer>")).toThrow("x: expected a set without repeated elements");
    expect(ok({ a: 1 }, "map<integer;integer>")).toThrow(/map key "a" is not an integer/);
    expect(ok([1, "2"], "list<integer>")).toThrow("x[1]: expected a 32-bit integer");
    expect(ok(null, "boolean")).toThrow("x: expected true or false, got null");
  });
});

describe("tolerance", () => {
  it("is 1e-6 for float, 1e-9 for double and exact otherwise", () => {
    expect(tolerance(parseSchemaType("float"))).toBe(1e-6);
    expect(tolerance(parseSchemaType("map<string;list<double>>"))).toBe(1e-9);
    expect(tolerance(parseSchemaType("list<long>"))).toBe(0);
  });
});
