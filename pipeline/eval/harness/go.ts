// Go harness with BabelCode's type mapping (int, int64, float64, bool, rune, string, []T,
// map[T]bool for sets, map[K]V) and BabelCode's header imports (fmt, math, reflect, sort) plus
// strings. A prediction's own `package main` and repeated imports are dropped: Go rejects both.
import { CODE_PLACEHOLDER, defineHarness, PRELUDE_PLACEHOLDER } from "./harness.js";
import { floatText, literals, quote, typeNamer } from "./literals.js";

export const goType = typeNamer(["bool", "int", "int64", "float64", "float64", "rune", "string"], {
  list: (e) => `[]${e}`,
  set: (e) => `map[${e}]bool`,
  map: (k, v) => `map[${k}]${v}`,
});

/** Scalars carry their type (`int64(5)`) so they keep it when boxed as interface{} for comparison. */
export const goLiteral = literals({
  integer: (n) => `int(${n})`,
  long: (n) => `int64(${n})`,
  float: (x) => `float64(${floatText(x)})`,
  double: (x) => `float64(${floatText(x)})`,
  character: (c) => `rune(${quote(c, "go", "'")})`,
  string: (s) => quote(s, "go"),
  list: (items, type) => `${goType(type)}{${items.join(", ")}}`,
  set: (items, type) => `${goType(type)}{${items.map((item) => `${item}: true`).join(", ")}}`,
  map: (entries, type) => `${goType(type)}{${entries.map(([k, v]) => `${k}: ${v}`).join(", ")}}`,
});

const HEADER_IMPORTS = ["fmt", "math", "reflect", "sort", "strings"];

const HEADER = `package main

import (
${HEADER_IMPORTS.map((p) => `\t"${p}"`).join("\n")}
)

${PRELUDE_PLACEHOLDER}
`;

const DRIVER = `
// ---- evaluation harness ----
var _ = sort.Ints
var _ = strings.Contains

func bcEqualValue(a, e reflect.Value, tol float64) bool {
	if !a.IsValid() || !e.IsValid() {
		return a.IsValid() == e.IsValid()
	}
	switch e.Kind() {
	case reflect.Float32, reflect.Float64:
		if a.Kind() != reflect.Float32 && a.Kind() != reflect.Float64 {
			return false
		}
		return math.Abs(a.Float()-e.Float()) <= tol
	case reflect.Slice, reflect.Array:
		if (a.Kind() != reflect.Slice && a.Kind() != reflect.Array) || a.Len() != e.Len() {
			return false
		}
		for i := 0; i < e.Len(); i++ {
			if !bcEqualValue(a.Index(i), e.Index(i), tol) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Kind() != reflect.Map || a.Type().Key() != e.Type().Key() || a.Len() != e.Len() {
			return false
		}
		for _, key := range e.MapKeys() {
			got := a.MapIndex(key)
			if !got.IsValid() || !bcEqualValue(got, e.MapIndex(key), tol) {
				return false
			}
		}
		return true
	}
	return a.Type() == e.Type() && a.Interface() == e.Interface()
}

func bcCheck(prefix string, thunk func() interface{}, expected interface{}, tol float64) {
	result := func() (result string) {
		defer func() {
			if r := recover(); r != nil {
				if _, isText := r.(string); isText {
					result = "panic"
				} else {
					result = fmt.Sprintf("%T", r)
				}
			}
		}()
		if bcEqualValue(reflect.ValueOf(thunk()), reflect.ValueOf(expected), tol) {
			return "PASSED"
		}
		return "FAILED"
	}()
	fmt.Println(prefix + result)
}
`;

interface ImportSpec {
  alias?: string;
  path: string;
}

const IMPORT_SPEC = /^\s*(?:([\w.]+)\s+)?"([^"]+)"\s*(?:\/\/.*)?$/;

/** Splits a Go prediction into its import specs and the rest, dropping the package clause. */
export function splitGoImports(code: string): { imports: ImportSpec[]; rest: string } {
  const lines = code.split("\n");
  const imports: ImportSpec[] = [];
  const rest: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*package\s+\w+\s*$/.test(line)) continue;
    const single = /^\s*import\s+((?:[\w.]+\s+)?"[^"]+")\s*(?:\/\/.*)?$/.exec(line);
    if (single) {
      const spec = IMPORT_SPEC.exec(single[1]!)!;
      imports.push(spec[1] ? { alias: spec[1], path: spec[2]! } : { path: spec[2]! });
      continue;
    }
    if (/^\s*import\s*\(\s*$/.test(line)) {
      i++;
      while (i < lines.length && !/^\s*\)\s*$/.test(lines[i]!)) {
        const spec = IMPORT_SPEC.exec(lines[i]!);
        if (spec) imports.push(spec[1] ? { alias: spec[1], path: spec[2]! } : { path: spec[2]! });
        i++;
      }
      continue;
    }
    rest.push(line);
  }
  return { imports, rest: rest.join("\n") };
}

/** One `import (...)` of the specs, each once; empty when there are none. */
export function goImportBlock(specs: readonly ImportSpec[]): string {
  const unique = [...new Map(specs.map((s) => [`${s.alias ?? ""} ${s.path}`, s])).values()];
  if (unique.length === 0) return "";
  return `import (\n${unique.map((s) => `\t${s.alias ? `${s.alias} ` : ""}"${s.path}"`).join("\n")}\n)`;
}

export const goHarness = defineHarness({
  language: "go",
  naming: "camel",
  literal: goLiteral,
  check: (tc, tol) =>
    `bcCheck(${quote(tc.prefix, "go")}, func() interface{} { return ${tc.call} }, ${tc.expected}, ${tol})`,
  program: (checks) =>
    `${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}\nfunc main() {\n\t${checks.join("\n\t")}\n}\n`,
  prepare(code) {
    const { imports, rest } = splitGoImports(code);
    // The header's imports are already there; importing them again is a compile error.
    const extra = imports.filter((spec) => spec.alias !== undefined || !HEADER_IMPORTS.includes(spec.path));
    return { prelude: goImportBlock(extra), body: rest };
  },
});
