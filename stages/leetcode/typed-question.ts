// A translated solution is judged by the eval library's BabelCode harness of its language, which
// needs typed parameters. TACO's tests are untyped JSON, but LeetCode's Python starter code is
// annotated (`def twoSum(self, nums: List[int], target: int) -> List[int]:`), and those annotations
// map onto BabelCode's types. Problems whose signature uses anything else (TreeNode, ListNode,
// Optional...) cannot be judged in another language, so they get no language follow-up.
import { parseQuestion, type Question } from "../../pipeline/eval/index.js";
import { checkValue, parseSchemaType, SchemaError } from "../../pipeline/eval/schema-type.js";

export interface Signature {
  params: { name: string; type: string }[];
  returns: string;
}

const SIMPLE: Record<string, string> = {
  int: "integer",
  float: "double",
  str: "string",
  bool: "boolean",
};

/** BabelCode's type for a Python annotation, or undefined when it has none. */
export function babelType(annotation: string): string | undefined {
  const a = annotation.replace(/\s+/g, "").replace(/^typing\./, "");
  if (SIMPLE[a]) return SIMPLE[a];
  const generic = /^(List|list|Set|set|Dict|dict)\[(.*)\]$/.exec(a);
  if (!generic) return undefined;
  const [, outer, inner] = generic as unknown as [string, string, string];
  const args = splitTop(inner);
  if (/^(List|list)$/.test(outer) && args.length === 1) {
    const element = babelType(args[0]!);
    return element && `list<${element}>`;
  }
  if (/^(Set|set)$/.test(outer) && args.length === 1) {
    const element = babelType(args[0]!);
    return element && ["integer", "string"].includes(element) ? `set<${element}>` : undefined;
  }
  if (args.length === 2) {
    const key = babelType(args[0]!);
    const value = babelType(args[1]!);
    return key && value && ["integer", "string"].includes(key) ? `map<${key};${value}>` : undefined;
  }
  return undefined;
}

function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "[") depth++;
    else if (text[i] === "]") depth--;
    else if (text[i] === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((p) => p !== "");
}

/** The typed signature of `fnName` in Python starter code, or why there is none. */
export function starterSignature(starter: string, fnName: string): Signature | { error: string } {
  const def = new RegExp(`def\\s+${fnName}\\s*\\(([^)]*)\\)\\s*(?:->\\s*([^:]+))?:`).exec(starter);
  if (!def) return { error: `the starter code does not define ${fnName}` };
  const params: Signature["params"] = [];
  for (const raw of splitTop(def[1]!.replace(/\s+/g, " "))) {
    const param = raw.trim();
    if (param === "self" || param === "") continue;
    const typed = /^([A-Za-z_]\w*)\s*:\s*(.+?)(?:\s*=.*)?$/.exec(param);
    if (!typed) return { error: `parameter '${param}' has no type annotation` };
    const type = babelType(typed[2]!);
    if (!type) return { error: `parameter ${typed[1]}: ${typed[2]} has no BabelCode type` };
    params.push({ name: typed[1]!, type });
  }
  const returns = def[2] ? babelType(def[2]) : undefined;
  if (!returns) return { error: `the return type ${def[2]?.trim() ?? "(none)"} has no BabelCode type` };
  return { params, returns };
}

const INT32 = 2 ** 31;

function hasBigInteger(value: unknown): boolean {
  if (typeof value === "number") return Number.isInteger(value) && Math.abs(value) >= INT32;
  if (Array.isArray(value)) return value.some(hasBigInteger);
  if (value && typeof value === "object") return Object.values(value).some(hasBigInteger);
  return false;
}

/**
 * The BabelCode question of a call-style LeetCode problem. TACO sometimes wraps an expected value in
 * a one-element list; the bare value is taken when only it fits the return type. Integers beyond
 * 32 bits make a type `long`.
 */
export function typedQuestion(
  id: string,
  fnName: string,
  signature: Signature,
  tests: { inputs: unknown[][]; outputs: unknown[] },
): Question | { error: string } {
  const big = (k: number | "return") =>
    k === "return" ? tests.outputs.some(hasBigInteger) : tests.inputs.some((args) => hasBigInteger(args[k]));
  const widen = (type: string, k: number | "return") => (big(k) ? type.replace(/integer/g, "long") : type);
  const returns = widen(signature.returns, "return");
  const params = signature.params.map((p, k) => ({ name: p.name, type: widen(p.type, k) }));
  let returnType: ReturnType<typeof parseSchemaType>;
  try {
    returnType = parseSchemaType(returns);
  } catch (error) {
    return { error: (error as Error).message };
  }
  const fits = (value: unknown): boolean => {
    try {
      checkValue(value, returnType, "the expected value");
      return true;
    } catch {
      return false;
    }
  };
  const testCases = tests.inputs.map((args, i) => {
    if (args.length !== params.length) return undefined;
    const want = tests.outputs[i];
    const outputs = !fits(want) && Array.isArray(want) && want.length === 1 && fits(want[0]) ? want[0] : want;
    return { idx: String(i), inputs: Object.fromEntries(params.map((p, k) => [p.name, args[k]])), outputs };
  });
  if (testCases.some((t) => t === undefined))
    return { error: `a test case does not have the ${params.length} arguments the signature names` };
  try {
    return parseQuestion({
      question_id: id,
      title: fnName,
      schema: { params, return: { type: returns } },
      test_cases: testCases,
      entry_fn_name: fnName,
    });
  } catch (error) {
    if (error instanceof SchemaError) return { error: error.message };
    throw error;
  }
}
