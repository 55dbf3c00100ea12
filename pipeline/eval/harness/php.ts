// PHP harness with BabelCode's literals: lists and maps are arrays, a set is `array(v => true)`.
// PHP arrays cannot tell a list from a map, so the comparison walks the schema type, passed as JSON.
import type { SchemaType } from "../schema-type.js";
import { tolerance } from "../schema-type.js";
import type { Question } from "../types.js";
import {
  CALLEE_PLACEHOLDER,
  CODE_PLACEHOLDER,
  type Harness,
  type PreparedCode,
  testPrefix,
} from "./harness.js";
import { floatText, mapEntries, singleQuoted } from "./literals.js";

export function phpLiteral(value: unknown, type: SchemaType): string {
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
      return `array(${(value as unknown[]).map((v) => phpLiteral(v, type.element)).join(", ")})`;
    case "set":
      return `array(${(value as unknown[]).map((v) => `${phpLiteral(v, type.element)} => true`).join(", ")})`;
    case "map":
      return `array(${mapEntries(value, type)
        .map(([k, v]) => `${phpLiteral(k, type.key)} => ${phpLiteral(v, type.value)}`)
        .join(", ")})`;
  }
}

const DRIVER = `
// ---- evaluation harness ----
function __bc_equal($actual, $expected, $type, $tol) {
    switch ($type['kind']) {
        case 'list':
            if (!is_array($actual) || count($actual) !== count($expected)) return false;
            $actual = array_values($actual);
            foreach (array_values($expected) as $i => $item) {
                if (!__bc_equal($actual[$i], $item, $type['element'], $tol)) return false;
            }
            return true;
        case 'set':
            if (!is_array($actual) || count($actual) !== count($expected)) return false;
            foreach ($expected as $key => $_) {
                if (!array_key_exists($key, $actual)) return false;
            }
            return true;
        case 'map':
            if (!is_array($actual) || count($actual) !== count($expected)) return false;
            foreach ($expected as $key => $item) {
                if (!array_key_exists($key, $actual) || !__bc_equal($actual[$key], $item, $type['value'], $tol)) return false;
            }
            return true;
        case 'float':
        case 'double':
            return (is_int($actual) || is_float($actual)) && abs($actual - $expected) <= $tol;
        case 'integer':
        case 'long':
            return (is_int($actual) || is_float($actual)) && $actual == $expected;
        case 'boolean':
            return $actual === $expected;
        default:
            return is_string($actual) && $actual === $expected;
    }
}

function __bc_check($prefix, $thunk, $expected, $type, $tol) {
    try {
        $result = __bc_equal($thunk(), $expected, $type, $tol) ? 'PASSED' : 'FAILED';
    } catch (\\Throwable $error) {
        $result = get_class($error);
    }
    echo $prefix . $result . "\\n";
}
`;

export const phpHarness: Harness = {
  language: "php",
  sandboxId: "php",
  requiresClass: false,
  generate(question: Question): string {
    const tol = tolerance(question.returnType);
    const type = `json_decode(${singleQuoted(JSON.stringify(question.returnType))}, true)`;
    const calls = question.testCases.map((tc) => {
      const args = question.params.map((p) => phpLiteral(tc.inputs[p.name], p.type)).join(", ");
      const expected = phpLiteral(tc.outputs, question.returnType);
      return `__bc_check(${singleQuoted(testPrefix(tc.idx))}, function () { return ${CALLEE_PLACEHOLDER}(${args}); }, ${expected}, $__bc_type, ${tol});`;
    });
    return `<?php\n${CODE_PLACEHOLDER}\n${DRIVER}\n$__bc_type = ${type};\n${calls.join("\n")}\n`;
  },
  prepare(code: string): PreparedCode {
    // The program already opened PHP mode; strict_types must be a file's first statement, so it goes.
    const body = code
      .replace(/^\s*<\?(php)?/, "")
      .replace(/\?>\s*$/, "")
      .replace(/^\s*declare\s*\(\s*strict_types\s*=\s*1\s*\)\s*;/m, "");
    return { prelude: "", body };
  },
  callee: (fn, cls) => (cls ? `(new ${cls}())->${fn}` : fn),
};
