// Ruby harness (BabelCode has none; the mapping follows Ruby's own types): Integer, Float, true/false,
// one-character String, String, Array, Set, Hash.
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { literals, singleQuoted } from "./literals.js";

export const rubyLiteral = literals({
  string: singleQuoted,
  set: (items) => `Set[${items.join(", ")}]`,
  map: (entries) => `{${entries.map(([k, v]) => `${k} => ${v}`).join(", ")}}`,
});

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

export const rubyHarness = defineHarness({
  language: "ruby",
  naming: "snake",
  literal: rubyLiteral,
  check: (tc, tol) => `__bc_check(${singleQuoted(tc.prefix)}, ${tc.expected}, ${tol}) { ${tc.call} }`,
  program: (checks) => `${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}\n${checks.join("\n")}\n`,
  callee: (fn, cls) => (cls ? `${cls}.new.${fn}` : fn),
});
