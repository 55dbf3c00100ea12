// C++ harness with BabelCode's type mapping (int, long long, float, double, bool, char, string,
// vector<T>, set<T>, map<K,V>). Arguments are named locals so `vector<int>& nums` parameters bind;
// results compare through overloads that also accept the unordered containers predictions return.
import { CALLEE_PLACEHOLDER, CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { cLikeScalars, literals, quote, typeNamer } from "./literals.js";

export const cppType = typeNamer(["bool", "int", "long long", "float", "double", "char", "string"], {
  list: (e) => `vector<${e}>`,
  set: (e) => `set<${e}>`,
  map: (k, v) => `map<${k},${v}>`,
});

export const cppLiteral = literals({
  ...cLikeScalars("C++"),
  string: (s) => `string(${quote(s, "c")})`,
  list: (items, type) => `${cppType(type)}{${items.join(", ")}}`,
  set: (items, type) => `${cppType(type)}{${items.join(", ")}}`,
  map: (entries, type) => `${cppType(type)}{${entries.map(([k, v]) => `{${k}, ${v}}`).join(", ")}}`,
});

const HEADER = `#include <bits/stdc++.h>
#include <cxxabi.h>
using namespace std;
`;

// Declarations first: the templates call each other, and unqualified lookup only sees what is declared.
const DRIVER = `
// ---- evaluation harness ----
template <class A, class B> bool bc_equal(const A& a, const B& b, double tol);
template <class A, class B> bool bc_equal(const vector<A>& a, const vector<B>& b, double tol);
template <class A, class B> bool bc_equal(const set<A>& a, const set<B>& b, double tol);
template <class A, class B> bool bc_equal(const unordered_set<A>& a, const set<B>& b, double tol);
template <class K, class A, class L, class B> bool bc_equal(const map<K, A>& a, const map<L, B>& b, double tol);
template <class K, class A, class L, class B>
bool bc_equal(const unordered_map<K, A>& a, const map<L, B>& b, double tol);

template <class A, class B> bool bc_equal(const A& a, const B& b, double tol) {
  if constexpr (is_floating_point<A>::value || is_floating_point<B>::value) {
    return fabs((double)a - (double)b) <= tol;
  } else {
    return a == b;
  }
}
template <class A, class B> bool bc_equal(const vector<A>& a, const vector<B>& b, double tol) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (!bc_equal(a[i], b[i], tol)) return false;
  return true;
}
template <class S, class B> bool bc_same_set(const S& a, const set<B>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& item : b)
    if (a.count(item) == 0) return false;
  return true;
}
template <class A, class B> bool bc_equal(const set<A>& a, const set<B>& b, double) { return bc_same_set(a, b); }
template <class A, class B> bool bc_equal(const unordered_set<A>& a, const set<B>& b, double) {
  return bc_same_set(a, b);
}
template <class M, class L, class B> bool bc_same_map(const M& a, const map<L, B>& b, double tol) {
  if (a.size() != b.size()) return false;
  for (const auto& entry : b) {
    auto found = a.find(entry.first);
    if (found == a.end() || !bc_equal(found->second, entry.second, tol)) return false;
  }
  return true;
}
template <class K, class A, class L, class B> bool bc_equal(const map<K, A>& a, const map<L, B>& b, double tol) {
  return bc_same_map(a, b, tol);
}
template <class K, class A, class L, class B>
bool bc_equal(const unordered_map<K, A>& a, const map<L, B>& b, double tol) {
  return bc_same_map(a, b, tol);
}

static string bc_type_name(const char* mangled) {
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  string name = status == 0 && readable ? readable : mangled;
  free(readable);
  name.erase(remove(name.begin(), name.end(), ' '), name.end());
  return name;
}

template <class F, class E> void bc_check(const char* prefix, F thunk, const E& expected, double tol) {
  string result;
  try {
    result = bc_equal(thunk(), expected, tol) ? "PASSED" : "FAILED";
  } catch (const exception& error) {
    result = bc_type_name(typeid(error).name());
  } catch (...) {
    result = "UnknownException";
  }
  cout << prefix << result << endl;
}
`;

export const cppHarness = defineHarness({
  language: "cpp",
  naming: "camel",
  literal: cppLiteral,
  check: (tc, tol) =>
    [
      "  {",
      ...tc.args.map((arg, i) => `    auto bc_arg${i} = ${arg};`),
      `    bc_check(${quote(tc.prefix, "c")}, [&]() { return ${CALLEE_PLACEHOLDER}(${tc.args.map((_, i) => `bc_arg${i}`).join(", ")}); }, ${tc.expected}, ${tol});`,
      "  }",
    ].join("\n"),
  program: (checks) =>
    `${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}\nint main() {\n${checks.join("\n")}\n  return 0;\n}\n`,
  callee: (fn, cls) => (cls ? `${cls}().${fn}` : fn),
});
