# The judge that runs in the sandbox for `eval model`: one model solution against one benchmark
# task's tests. It sanitises the solution (top-level demo code dropped, as EvalPlus's sanitiser
# does), runs it, runs the tests, and prints one verdict line: the nonce, then JSON. For the paper's
# feedback it says more than pass/fail (failed_assert); a time-out is the sandbox's to report. The
# job is the base64 JSON below, filled in by pipeline/eval/model/judge.ts.
import ast
import base64
import functools
import io
import json
import linecache
import os
import sys
import traceback
import types

JOB = json.loads(base64.b64decode("__JOB__").decode("utf-8"))
REAL_STDOUT = sys.stdout
SHOW_LIMIT = 4000
TRACKED_FILES = ("<prompt>", "<solution>")


def show(value):
    try:
        text = repr(value)
    except BaseException:
        text = "<%s that cannot be shown>" % type(value).__name__
    if len(text) > SHOW_LIMIT:
        half = SHOW_LIMIT // 2
        text = text[:half] + " ... " + text[-half:]
    return text


class CappedOutput(io.TextIOBase):
    """Keeps the head of what the solution prints; a flood costs memory no more than the cap."""

    def __init__(self, limit):
        self.parts = []
        self.kept = 0
        self.dropped = 0
        self.limit = limit

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(len(s), room)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self):
        out = "".join(self.parts)
        if self.dropped:
            out += "\n[... %d more characters of output ...]" % self.dropped
        return out


def register(name, source):
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return compile(source, name, "exec")


def is_main_guard(node):
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left] + list(node.test.comparators)
    names = [p.id for p in parts if isinstance(p, ast.Name)]
    consts = [p.value for p in parts if isinstance(p, ast.Constant)]
    return "__name__" in names and "__main__" in consts


DEMO_CALLS = {"print", "input", "exit", "quit"}


def read_by_definitions(tree):
    """Names the solution's functions and classes read: globals they need set up at the top level."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names


def imported(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def feeds(node, needed, modules):
    """True when `node` sets or changes a global the definitions read (a table filled by a loop);
    reading one, or calling an imported module (`math.sqrt`), changes nothing."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id in needed:
            return True
        target = None
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            target = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            target = n.func.value  # TABLE.append(...)
        if isinstance(target, ast.Name) and target.id in needed and target.id not in modules:
            return True
    return False


def is_demo(node, defined, needed, modules):
    """Top-level code that shows the solution off rather than being part of it."""
    if isinstance(node, ast.Assert) or is_main_guard(node):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False  # a docstring
    if not isinstance(node, (ast.Expr, ast.For, ast.While, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return False
    if feeds(node, needed, modules):
        return False
    calls = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    # a call of the solution's own code, a print or an input; a loop with none of them sets up nothing
    # the definitions read either, but may be a slow precomputation: it is kept, as module calls are
    return bool(calls & (DEMO_CALLS | defined))


def sanitize(source):
    """The solution without top-level demo code: asserts, the main guard, and the calls, prints,
    inputs, loops and assignments that exercise the solution; imports, definitions, module set-up
    calls (sys.setrecursionlimit) and globals the definitions read (even filled by a loop) stay."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    needed = read_by_definitions(tree)
    modules = imported(tree)
    lines = source.splitlines(True)
    kept = []
    for node in tree.body:
        if is_demo(node, defined, needed, modules):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        kept.append("".join(lines[first - 1 : node.end_lineno]))
    return "\n".join(part.rstrip("\n") + "\n" for part in kept)


class CallLog:
    """The last top-level call of a tracked function: its arguments and what it returned."""

    def __init__(self):
        self.depth = 0
        self.call = None
        self.returned = False
        self.value = None

    def wrap(self, name, fn):
        log = self

        @functools.wraps(fn)
        def tracked(*args, **kwargs):
            top = log.depth == 0
            if top:
                shown = [show(a) for a in args] + ["%s=%s" % (k, show(v)) for k, v in kwargs.items()]
                log.call = "%s(%s)" % (name, ", ".join(shown))
                log.returned = False
            log.depth += 1
            try:
                value = fn(*args, **kwargs)
            finally:
                log.depth -= 1
            if top:
                log.returned = True
                log.value = value
            return value

        return tracked


def called_names(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def user_traceback(error):
    here = user_traceback.__code__.co_filename
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != here]
    text = "Traceback (most recent call last):\n" if frames else ""
    text += "".join(traceback.format_list(frames))
    return text + "".join(traceback.format_exception_only(type(error), error))


def innermost(error):
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def mentions(node, names):
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def failed_assert(error, test_source, tracked, log):
    """Input, expected and actual of the assert that failed in the test code, or None.

    The input is the last top-level call of the solution's function, the expected value the assert's
    other side (evaluated where it failed), the actual one what the call returned. Any other exception
    gives its traceback instead, naming the solution's own lines.
    """
    tb = innermost(error)
    if tb is None or tb.tb_frame.f_code.co_filename != "<test>":
        return None
    line = tb.tb_lineno
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return None
    asserts = [n for n in ast.walk(tree) if isinstance(n, ast.Assert) and n.lineno <= line <= n.end_lineno]
    if not asserts:
        return None
    node = min(asserts, key=lambda n: n.end_lineno - n.lineno)
    frame = tb.tb_frame
    condition = ast.get_source_segment(test_source, node.test) or "the assertion"
    expected_node = actual_node = None
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        calls = tracked | {"candidate"}
        expected_node, actual_node = (left, right) if mentions(right, calls) and not mentions(left, calls) else (right, left)
    elif isinstance(test, ast.Call) and len(test.args) >= 2:
        actual_node, expected_node = test.args[0], test.args[1]

    def evaluate(expr):
        code = compile(ast.Expression(expr), "<assert>", "eval")
        return eval(code, frame.f_globals, frame.f_locals)

    expected = None
    if expected_node is not None:
        try:
            expected = show(evaluate(expected_node))
        except BaseException:
            expected = None
    if expected is None:
        expected = "a value for which `%s` holds" % condition
    actual = show(log.value) if log.returned else None
    if actual is None and actual_node is not None:
        try:
            actual = show(evaluate(actual_node))
        except BaseException:
            actual = None
    if log.call is None or actual is None:
        return None
    return {"input": log.call, "expected": expected, "actual": actual, "assertion": condition}


def run(nonce):
    verdict = {"sanitized": sanitize(JOB["solution"])}
    output = CappedOutput(JOB["max_output"])
    sys.stdout = sys.stderr = output
    ns = {"__name__": "__solution__", "__builtins__": __builtins__}
    log = CallLog()
    tracked = set()
    try:
        if JOB["prelude"]:
            try:
                exec(register("<prompt>", JOB["prelude"]), ns)
            except BaseException:
                pass  # the benchmark's own stub: the solution defines what it left out
        exec(register("<solution>", verdict["sanitized"]), ns)
        if JOB["setup"]:
            exec(register("<setup>", JOB["setup"]), ns)
        judge = JOB["judge"]
        # The tests see wrapped functions in a namespace of their own; the solution's calls to
        # itself (recursion) keep going to the unwrapped ones and cost no extra stack.
        tests = dict(ns)
        if judge["mode"] == "check":
            entry = judge["entry_point"]
            if not callable(ns.get(entry)):
                raise NameError("name '%s' is not defined" % entry)
            tracked = {entry}
            exec(register("<test>", judge["test"]), tests)
            tests["check"](log.wrap(entry, ns[entry]))
        else:
            for name in called_names(judge["test"]):
                fn = ns.get(name)
                if isinstance(fn, types.FunctionType) and fn.__code__.co_filename in TRACKED_FILES:
                    tracked.add(name)
                    tests[name] = log.wrap(name, fn)
            exec(register("<test>", judge["test"]), tests)
        verdict["status"] = "passed"
    except BaseException as error:
        mismatch = None
        if isinstance(error, AssertionError):
            mismatch = failed_assert(error, JOB["judge"]["test"], tracked, log)
        if mismatch is not None:
            verdict["status"] = "failed"
            verdict.update(mismatch)
        else:
            verdict["status"] = "error"
            verdict["error"] = user_traceback(error)
    verdict["stdout"] = output.text()
    REAL_STDOUT.write(nonce + json.dumps(verdict) + "\n")
    REAL_STDOUT.flush()
    # threads or atexit hooks the solution left behind must not hold the verdict back
    os._exit(0)


# The nonce comes on stdin, read before any solution code runs and kept in no global: it is not in
# this program's text (the solution could read the file) nor in JOB (it could import __main__), and
# the solution finds stdin drained. A solution printing a verdict line of its own cannot know it.
def read_nonce():
    nonce = sys.stdin.readline().strip()
    sys.stdin = io.StringIO("")
    return nonce


run(read_nonce())
