// Rust harness with BabelCode's type mapping (i32, i64, f32, f64, bool, char, String, Vec<T>,
// HashSet<T>, HashMap<K, V>). Literals leave their element types to inference from the entry
// point's signature; a panic is caught per test case and reported as `panic`.
import { CODE_PLACEHOLDER, defineHarness, PRELUDE_PLACEHOLDER } from "./harness.js";
import { indentRest, literals, quote, typeNamer } from "./literals.js";

export const rustType = typeNamer(["bool", "i32", "i64", "f32", "f64", "char", "String"], {
  list: (e) => `Vec<${e}>`,
  set: (e) => `HashSet<${e}>`,
  map: (k, v) => `HashMap<${k}, ${v}>`,
});

export const rustLiteral = literals({
  character: (c) => quote(c, "rust", "'"),
  string: (s) => `String::from(${quote(s, "rust")})`,
  list: (items) => `vec![${items.join(", ")}]`,
  set: (items) => `std::collections::HashSet::from([${items.join(", ")}])`,
  map: (entries) =>
    `std::collections::HashMap::from([${entries.map(([k, v]) => `(${k}, ${v})`).join(", ")}])`,
});

const DRIVER = `
// ---- evaluation harness ----
trait BcEq {
    fn bc_eq(&self, other: &Self) -> bool;
}
macro_rules! bc_eq_exact {
    ($($t:ty),*) => { $(impl BcEq for $t { fn bc_eq(&self, other: &Self) -> bool { self == other } })* };
}
bc_eq_exact!(i32, i64, bool, char, String);
impl BcEq for f32 {
    fn bc_eq(&self, other: &Self) -> bool { ((*self as f64) - (*other as f64)).abs() <= 1e-6 }
}
impl BcEq for f64 {
    fn bc_eq(&self, other: &Self) -> bool { (self - other).abs() <= 1e-9 }
}
impl<T: BcEq> BcEq for Vec<T> {
    fn bc_eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a.bc_eq(b))
    }
}
impl<T: Eq + std::hash::Hash> BcEq for std::collections::HashSet<T> {
    fn bc_eq(&self, other: &Self) -> bool { self == other }
}
impl<K: Eq + std::hash::Hash, V: BcEq> BcEq for std::collections::HashMap<K, V> {
    fn bc_eq(&self, other: &Self) -> bool {
        self.len() == other.len() && other.iter().all(|(k, v)| self.get(k).map_or(false, |got| got.bc_eq(v)))
    }
}
fn bc_check<T: BcEq, F: FnOnce() -> T>(prefix: &str, thunk: F, expected: T) {
    let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(thunk)) {
        Ok(actual) => if actual.bc_eq(&expected) { "PASSED" } else { "FAILED" },
        Err(_) => "panic",
    };
    println!("{}{}", prefix, result);
}
`;

/** Whether the prediction already imports `name` from std::collections (a second `use` would clash). */
function importsCollection(code: string, name: string): boolean {
  return new RegExp(
    `\\buse\\s+std::collections::(?:\\*|${name}\\b|\\{[^}]*(?:\\b${name}\\b|\\*)[^}]*\\})`,
  ).test(code);
}

export const rustHarness = defineHarness({
  language: "rust",
  naming: "snake",
  literal: rustLiteral,
  check: (tc) => `bc_check(${quote(tc.prefix, "rust")}, || ${tc.call}, ${tc.expected});`,
  program: (checks) =>
    [
      PRELUDE_PLACEHOLDER,
      "#![allow(unused_imports, dead_code, unused_variables, unused_mut, non_snake_case)]",
      "",
      CODE_PLACEHOLDER,
      DRIVER,
      "fn main() {",
      `    ${indentRest(checks.join("\n"), 4)}`,
      "}",
      "",
    ].join("\n"),
  prepare(code) {
    // Inner attributes (`#![...]`) must open the crate, so they move to the top.
    const attributes = code.match(/^[ \t]*#!\[[^\]]*\][ \t]*$/gm) ?? [];
    let body = code.replace(/^[ \t]*#!\[[^\]]*\][ \t]*\r?\n?/gm, "");
    // BabelCode's Rust header brings HashMap and HashSet into scope; predictions may rely on it.
    const uses = ["HashMap", "HashSet"]
      .filter((name) => !importsCollection(body, name))
      .map((name) => `use std::collections::${name};`);
    if (uses.length) body = `${uses.join("\n")}\n${body}`;
    return { prelude: attributes.map((a) => a.trim()).join("\n"), body };
  },
  callee: (fn, cls) => (cls ? `${cls}::${fn}` : fn),
});
