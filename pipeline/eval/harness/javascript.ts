// JavaScript and TypeScript harnesses (BabelCode's literals: arrays, `new Set([...])`, object
// literals for maps). TypeScript is transpiled without a type check, so one driver serves both.
import type { LanguageName } from "../../code/languages.js";
import type { SchemaType } from "../schema-type.js";
import { tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import { CALLEE_PLACEHOLDER, CODE_PLACEHOLDER, type Harness, testPrefix } from "./harness.js";
import { floatText, mapEntries, quote } from "./literals.js";

/** TypeScript's names for the grammar's types (number, Array<T>, Set<T>, Record<K,V>). */
export function typescriptType(type: SchemaType): string {
  switch (type.kind) {
    case "boolean":
      return "boolean";
    case "integer":
    case "long":
    case "float":
    case "double":
      return "number";
    case "character":
    case "string":
      return "string";
    case "list":
      return `Array<${typescriptType(type.element)}>`;
    case "set":
      return `Set<${typescriptType(type.element)}>`;
    case "map":
      return `Record<${typescriptType(type.key)},${typescriptType(type.value)}>`;
  }
}

function literal(value: unknown, type: SchemaType, typed: boolean): string {
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
      return quote(value as string, "js");
    case "list":
      return `[${(value as unknown[]).map((v) => literal(v, type.element, typed)).join(", ")}]`;
    case "set": {
      const items = (value as unknown[]).map((v) => literal(v, type.element, typed)).join(", ");
      return typed ? `new Set<${typescriptType(type.element)}>([${items}])` : `new Set([${items}])`;
    }
    case "map":
      return `{${mapEntries(value, type)
        .map(([k, v]) => `${literal(String(k), { kind: "string" }, typed)}: ${literal(v, type.value, typed)}`)
        .join(", ")}}`;
  }
}

export const javascriptLiteral = (value: unknown, type: SchemaType): string => literal(value, type, false);
export const typescriptLiteral = (value: unknown, type: SchemaType): string => literal(value, type, true);

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

function makeHarness(language: LanguageName, sandboxId: string, typed: boolean): Harness {
  return {
    language,
    sandboxId,
    requiresClass: false,
    generate(question: Question): string {
      const tol = tolerance(question.returnType);
      const calls = question.testCases.map((tc) => {
        const args = question.params.map((p) => literal(tc.inputs[p.name], p.type, typed)).join(", ");
        const expected = literal(tc.outputs, question.returnType, typed);
        return `__bcCheck(${quote(testPrefix(tc.idx), "js")}, () => ${CALLEE_PLACEHOLDER}(${args}), ${expected}, ${tol});`;
      });
      return `${CODE_PLACEHOLDER}\n${typed ? TS_DRIVER : DRIVER}\n${calls.join("\n")}\n`;
    },
    prepare(code: string) {
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
  };
}

export const javascriptHarness = makeHarness("javascript", "nodejs", false);
export const typescriptHarness = makeHarness("typescript", "typescript", true);
