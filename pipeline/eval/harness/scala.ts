// Scala harness with BabelCode's type mapping (Int, Long, Float, Double, Boolean, Char, String,
// List[T], HashSet[T], HashMap[K, V]) and its header (mutable HashMap, immutable HashSet). Scala 2
// allows no top-level `def`, so the prediction lives inside an object the driver imports from; the
// driver object comes first in the file because the sandbox launches the first `extends App`.
import { CODE_PLACEHOLDER, defineHarness } from "./harness.js";
import { cLikeScalars, indentRest, literals, quote, typeNamer } from "./literals.js";

export const scalaType = typeNamer(["Boolean", "Int", "Long", "Float", "Double", "Char", "String"], {
  list: (e) => `List[${e}]`,
  set: (e) => `HashSet[${e}]`,
  map: (k, v) => `HashMap[${k}, ${v}]`,
});

// Element types are spelled out so an empty collection is not a collection of Nothing.
export const scalaLiteral = literals({
  ...cLikeScalars("Scala"),
  list: (items, type) => `List[${scalaType(type.element)}](${items.join(", ")})`,
  set: (items, type) => `HashSet[${scalaType(type.element)}](${items.join(", ")})`,
  map: (entries, type) =>
    `HashMap[${scalaType(type.key)}, ${scalaType(type.value)}](${entries.map(([k, v]) => `${k} -> ${v}`).join(", ")})`,
});

/** The object the prediction's code is put in. */
const SOLUTION_OBJECT = "BcSolution";

const HELPERS = `
  def bcEqual(actual: Any, expected: Any, tol: Double): Boolean = (actual, expected) match {
    case (a: Array[_], e) => bcEqual(a.toSeq, e, tol)
    case (a: Double, e: Double) => math.abs(a - e) <= tol
    case (a: Float, e: Float) => math.abs(a.toDouble - e.toDouble) <= tol
    case (a: scala.collection.Seq[_], e: scala.collection.Seq[_]) =>
      a.length == e.length && a.zip(e).forall { case (x, y) => bcEqual(x, y, tol) }
    case (a: scala.collection.Set[_], e: scala.collection.Set[_]) => a == e
    case (a: scala.collection.Map[_, _], e: scala.collection.Map[_, _]) =>
      val got = a.asInstanceOf[scala.collection.Map[Any, Any]]
      a.size == e.size && e.forall { case (k, v) => got.get(k).exists(bcEqual(_, v, tol)) }
    case _ => actual == expected
  }

  def bcCheck(prefix: String, thunk: () => Any, expected: Any, tol: Double): Unit = {
    val result =
      try {
        if (bcEqual(thunk(), expected, tol)) "PASSED" else "FAILED"
      } catch {
        case error: Throwable => error.getClass.getSimpleName
      }
    println(prefix + result)
  }
`;

export const scalaHarness = defineHarness({
  language: "scala",
  naming: "camel",
  literal: scalaLiteral,
  check: (tc, tol) => `bcCheck(${quote(tc.prefix, "java")}, () => ${tc.call}, ${tc.expected}, ${tol})`,
  program: (checks) =>
    [
      "import scala.collection.mutable.HashMap",
      "import scala.collection.immutable.HashSet",
      "",
      "// ---- evaluation harness ----",
      "object QuestionEvaluator extends App {",
      `  import ${SOLUTION_OBJECT}._`,
      HELPERS,
      `  ${indentRest(checks.join("\n"), 2)}`,
      "}",
      "",
      `object ${SOLUTION_OBJECT} {`,
      CODE_PLACEHOLDER,
      "}",
      "",
    ].join("\n"),
  // A package clause cannot stand inside an object.
  prepare: (code) => ({ prelude: "", body: code.replace(/^\s*package\s+[\w.]+\s*;?[ \t]*$/m, "") }),
  callee(fn, cls, code) {
    if (!cls) return fn;
    // An `object` is called as it is; a `class` needs an instance.
    return new RegExp(`\\bobject\\s+${cls}\\b`).test(code) ? `${cls}.${fn}` : `new ${cls}().${fn}`;
  },
});
