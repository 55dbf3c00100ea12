// Ruby harness (BabelCode has none; the mapping follows Ruby's own types): Integer, Float, true/false,
// one-character String, String, Array, Set, Hash.
import type { SchemaType } from "../schema-type.js";
import { tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import { CALLEE_PLACEHOLDER, CODE_PLACEHOLDER, type Harness, testPrefix } from "./harness.js";
import { floatText, mapEntries, singleQuoted } from "./literals.js";

export function rubyLiteral(value: unknown, type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return value ? "true" : "false";
    case "integer":
    case "long":
      return String(value);
    case "float":
    case "double":
      return floatText(value as number);
    case "character":
    case "string":
      return singleQuoted(value as string);
    case "list":
      return `[${(value as unknown[]).map((v) => rubyLiteral(v, type.element)).join(", ")}]`;
    case "set":
      return `Set[${(value as unknown[]).map((v) => rubyLiteral(v, type.element)).join(", ")}]`;
    case "map":
      return `{${mapEntries(value, type)
        .map(([k, v]) => `${rubyLiteral(k, type.key)} => ${rubyLiteral(v, type.value)}`)
        .join(", ")}}`;
  }
}

const HEADER = `require 'set'
$stdout.sync = true
`;

const DRIVER = `
# ---- evaluation harness ----
def __bc_equal(actual, expected, tol)
  case expected
  when true, false then actual.equal?(expected)
  when Float then (actual.is_a?(Integer) || actual.is_a?(Float)) && (actual - expected).abs <= tol
  when Integer then (actual.is_a?(Integer) || actual.is_a?(Float)) && actual == expected
  when String then actual.is_a?(String) && actual == expected
  when Array
    actual.is_a?(Array) && actual.length == expected.length &&
      expected.each_with_index.all? { |item, i| __bc_equal(actual[i], item, tol) }
  when Set then actual.is_a?(Set) && actual == expected
  when Hash
    actual.is_a?(Hash) && actual.size == expected.size &&
      expected.all? { |key, item| actual.key?(key) && __bc_equal(actual[key], item, tol) }
  else actual == expected
  end
end

def __bc_check(prefix, expected, tol)
  result = begin
    __bc_equal(yield, expected, tol) ? 'PASSED' : 'FAILED'
  rescue Exception => e # SystemExit and SystemStackError are the prediction's failures too
    e.class.name
  end
  puts prefix + result
end
`;

export const rubyHarness: Harness = {
  language: "ruby",
  sandboxId: "ruby",
  requiresClass: false,
  generate(question: Question): string {
    const tol = tolerance(question.returnType);
    const calls = question.testCases.map((tc) => {
      const args = question.params.map((p) => rubyLiteral(tc.inputs[p.name], p.type)).join(", ");
      const expected = rubyLiteral(tc.outputs, question.returnType);
      return `__bc_check(${singleQuoted(testPrefix(tc.idx))}, ${expected}, ${tol}) { ${CALLEE_PLACEHOLDER}(${args}) }`;
    });
    return `${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}\n${calls.join("\n")}\n`;
  },
  prepare: (code) => ({ prelude: "", body: code }),
  callee: (fn, cls) => (cls ? `${cls}.new.${fn}` : fn),
};
