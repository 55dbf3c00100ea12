// PHP harness with BabelCode's literals: lists and maps are arrays, a set is `array(v => true)`.
// PHP arrays cannot tell a list from a map, so the comparison walks the schema type, passed as JSON.
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { literals, singleQuoted } from "./literals.js";

export const phpLiteral = literals({
  string: singleQuoted,
  list: (items) => `array(${items.join(", ")})`,
  set: (items) => `array(${items.map((item) => `${item} => true`).join(", ")})`,
  map: (entries) => `array(${entries.map(([k, v]) => `${k} => ${v}`).join(", ")})`,
});

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

export const phpHarness = defineHarness({
  language: "php",
  naming: "camel",
  literal: phpLiteral,
  check: (tc, tol) =>
    `__bc_check(${singleQuoted(tc.prefix)}, function () { return ${tc.call}; }, ${tc.expected}, $__bc_type, ${tol});`,
  program(checks, question) {
    const type = `json_decode(${singleQuoted(JSON.stringify(question.returnType))}, true)`;
    return `<?php\n${CODE_PLACEHOLDER}\n${DRIVER}\n$__bc_type = ${type};\n${checks.join("\n")}\n`;
  },
  prepare(code) {
    // The program already opened PHP mode; strict_types must be a file's first statement, so it goes.
    const body = code
      .replace(/^\s*<\?(php)?/, "")
      .replace(/\?>\s*$/, "")
      .replace(/^\s*declare\s*\(\s*strict_types\s*=\s*1\s*\)\s*;/m, "");
    return { prelude: "", body };
  },
  callee: (fn, cls) => (cls ? `(new ${cls}())->${fn}` : fn),
});
