// JavaScript and TypeScript harnesses (BabelCode's literals: arrays, `new Set([...])`, object
// literals for maps). TypeScript is transpiled without a type check, so one driver serves both.
import type { LanguageName } from "../../code/languages.js";
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { type LiteralDialect, literals, quote, typeNamer } from "./literals.js";

/** TypeScript's names for the grammar's types (number, Array<T>, Set<T>, Record<K,V>). */
export const typescriptType = typeNamer(
  ["boolean", "number", "number", "number", "number", "string", "string"],
  {
    list: (e) => `Array<${e}>`,
    set: (e) => `Set<${e}>`,
    map: (k, v) => `Record<${k},${v}>`,
  },
);

// Object keys are strings whatever the key type, so an integer key is written quoted.
const objectKey = (key: string): string => (key.startsWith('"') ? key : quote(key, "js"));

const JAVASCRIPT_LITERALS: Pick<LiteralDialect, "string" | "set" | "map"> = {
  string: (s) => quote(s, "js"),
  set: (items) => `new Set([${items.join(", ")}])`,
  map: (entries) => `{${entries.map(([k, v]) => `${objectKey(k)}: ${v}`).join(", ")}}`,
};

export const javascriptLiteral = literals(JAVASCRIPT_LITERALS);
export const typescriptLiteral = literals({
  ...JAVASCRIPT_LITERALS,
  set: (items, type) => `new Set<${typescriptType(type.element)}>([${items.join(", ")}])`,
});

// Maps may come back as objects or Map instances; keys compare as strings, as object keys do.
const DRIVER = `
// ---- evaluation harness ----
function __bcEntries(value) {
  if (value instanceof Map) return [...value.entries()].map(([k, v]) => [String(k), v]);
  if (value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Set)) {
    return Object.entries(value);
  }
  return null;
}
function __bcEqual(actual, expected, tol) {
  if (expected instanceof Set) {
    if (!(actual instanceof Set) || actual.size !== expected.size) return false;
    for (const item of expected) if (!actual.has(item)) return false;
    return true;
  }
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length &&
      expected.every((item, i) => __bcEqual(actual[i], item, tol));
  }
  if (expected !== null && typeof expected === "object") {
    const got = __bcEntries(actual);
    if (got === null) return false;
    const want = Object.entries(expected);
    if (got.length !== want.length) return false;
    const index = new Map(got);
    return want.every(([k, v]) => index.has(k) && __bcEqual(index.get(k), v, tol));
  }
  if (typeof expected === "number") {
    if (typeof actual !== "number") return false;
    return tol > 0 ? Math.abs(actual - expected) <= tol : actual === expected;
  }
  return actual === expected;
}
function __bcCheck(prefix, thunk, expected, tol) {
  let result;
  try {
    result = __bcEqual(thunk(), expected, tol) ? "PASSED" : "FAILED";
  } catch (error) {
    result = error !== null && typeof error === "object" && error.constructor ? error.constructor.name : "Error";
  }
  console.log(prefix + result);
}
`;

/** The driver with `any` annotations, so a type checker finds no implicit-any code of ours. */
const TS_DRIVER = DRIVER.replace(/function (\w+)\(([^)]*)\)/g, (_m, name: string, params: string) => {
  const typed = params
    .split(",")
    .map((p) => `${p.trim()}: any`)
    .join(", ");
  return `function ${name}(${typed}): any`;
}).replace("catch (error)", "catch (error: any)");

function makeHarness(language: LanguageName, sandboxId: string, typed: boolean) {
  return defineHarness({
    language,
    sandboxId,
    naming: "camel",
    literal: typed ? typescriptLiteral : javascriptLiteral,
    check: (tc, tol) => `__bcCheck(${quote(tc.prefix, "js")}, () => ${tc.call}, ${tc.expected}, ${tol});`,
    program: (checks) => `${CODE_PLACEHOLDER}\n${typed ? TS_DRIVER : DRIVER}\n${checks.join("\n")}\n`,
    prepare(code) {
      // main.js runs as CommonJS: ES module `export` keywords would be syntax errors there.
      const body = typed
        ? code
        : code
            .replace(/^export\s+default\s+(?=(async\s+)?function|class)/gm, "")
            .replace(/^export\s+(?=(async\s+)?function|class|const|let|var)/gm, "")
            .replace(/^export\s+default\s+[\w$]+\s*;?\s*$/gm, "");
      return { prelude: "", body };
    },
    callee: (fn, cls) => (cls ? `new ${cls}().${fn}` : fn),
  });
}

export const javascriptHarness = makeHarness("javascript", "nodejs", false);
export const typescriptHarness = makeHarness("typescript", "typescript", true);
