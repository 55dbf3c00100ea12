// C harness for questions whose types are all leaves (BabelCode has no C; the mapping follows C's
// own: int, long long, float, double, bool, char, char* for strings). C has no list, set or map that
// carries its length, so a question using one is a generation failure, not a guess at a convention.
// A test that crashes (SIGSEGV, SIGFPE, SIGABRT) is caught with sigsetjmp and reported by the
// signal's name, the way other harnesses report an exception's.
import { formatSchemaType, type SchemaType } from "../schema-type.js";
import {
  CALLEE_PLACEHOLDER,
  CODE_PLACEHOLDER,
  defineHarness,
  type Harness,
  UnsupportedTypeError,
} from "./harness.js";
import { cLikeScalars, literals, quote } from "./literals.js";

const noContainers = (type: SchemaType): never => {
  throw new UnsupportedTypeError(
    `C has no list, set or map type that carries its own length (this question uses ${formatSchemaType(type)}); only questions with leaf types are generated for C`,
  );
};

export const cLiteral = literals({
  ...cLikeScalars("C"),
  list: (_items, type) => noContainers(type),
  set: (_items, type) => noContainers(type),
  map: (_entries, type) => noContainers(type),
});

/** C's declaration of a local holding a value of the type; strings are mutable copies. */
function cLocal(type: SchemaType, name: string): string {
  switch (type.kind) {
    case "boolean":
      return `bool ${name}`;
    case "integer":
      return `int ${name}`;
    case "long":
      return `long long ${name}`;
    case "float":
      return `float ${name}`;
    case "double":
      return `double ${name}`;
    case "character":
      return `char ${name}`;
    case "string":
      return `char ${name}[]`;
    default:
      throw new UnsupportedTypeError(`C cannot hold a ${formatSchemaType(type)}`);
  }
}

/** The C expression that is true when `bc_got` equals `bc_want` for the return type. */
function cEquals(type: SchemaType, tol: number): string {
  switch (type.kind) {
    case "float":
    case "double":
      return `fabs((double)bc_got - (double)bc_want) <= ${tol}`;
    case "boolean":
      return "(bc_got != 0) == bc_want";
    case "string":
      return "bc_got != NULL && strcmp(bc_got, bc_want) == 0";
    default:
      return "bc_got == bc_want";
  }
}

const HEADER = `#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
`;

// An alternate stack lets the handler run after a stack overflow too.
const DRIVER = `
/* ---- evaluation harness ---- */
static sigjmp_buf bc_jump;
static volatile sig_atomic_t bc_signal;

static void bc_on_signal(int sig) {
  bc_signal = sig;
  siglongjmp(bc_jump, 1);
}

static void bc_catch_signals(void) {
  static char stack[1 << 16];
  stack_t alt = {0};
  alt.ss_sp = stack;
  alt.ss_size = sizeof stack;
  sigaltstack(&alt, NULL);
  struct sigaction action = {0};
  action.sa_handler = bc_on_signal;
  action.sa_flags = SA_ONSTACK | SA_NODEFER;
  int signals[] = {SIGSEGV, SIGFPE, SIGABRT, SIGBUS, SIGILL};
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &action, NULL);
}

static const char* bc_signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    default: return "signal";
  }
}

static void bc_report(const char* prefix, const char* result) {
  printf("%s%s\\n", prefix, result);
  fflush(stdout);
}
`;

const cLeavesHarness = defineHarness({
  language: "c",
  naming: "snake",
  literal: cLiteral,
  check(tc, tol, question) {
    const want = cLocal(question.returnType, "bc_want");
    // A returned string is only read, so any char pointer the prediction returns binds.
    const got =
      question.returnType.kind === "string" ? "const char* bc_got" : cLocal(question.returnType, "bc_got");
    const locals = question.params.map((p, i) => `    ${cLocal(p.type, `bc_arg${i}`)} = ${tc.args[i]};`);
    const args = question.params.map((_, i) => `bc_arg${i}`).join(", ");
    const prefix = quote(tc.prefix, "c");
    return [
      "  {",
      ...locals,
      `    ${want} = ${tc.expected};`,
      "    if (sigsetjmp(bc_jump, 1) == 0) {",
      `      ${got} = ${CALLEE_PLACEHOLDER}(${args});`,
      `      bc_report(${prefix}, ${cEquals(question.returnType, tol)} ? "PASSED" : "FAILED");`,
      "    } else {",
      `      bc_report(${prefix}, bc_signal_name(bc_signal));`,
      "    }",
      "  }",
    ].join("\n");
  },
  program: (checks) =>
    `${HEADER}\n${CODE_PLACEHOLDER}\n${DRIVER}\nint main(void) {\n  bc_catch_signals();\n${checks.join("\n")}\n  return 0;\n}\n`,
});

/** The first container among the question's types names what C cannot write, before any value does. */
export const cHarness: Harness = {
  ...cLeavesHarness,
  generate(question) {
    const container = [...question.params.map((p) => p.type), question.returnType].find(
      (type) => type.kind === "list" || type.kind === "set" || type.kind === "map",
    );
    if (container) noContainers(container);
    return cLeavesHarness.generate(question);
  },
};
