// Python the way the paper's code interpreter ran it: one session per dialogue, a later block seeing
// what earlier blocks defined. The sandbox runs whole programs, so a session is replayed: the earlier
// blocks run first, their output discarded and their errors ignored (shown when they ran), then the
// new block runs as a cell whose traceback names its own lines, as an interpreter's would.

/** A Python program that replays `previous` silently and then runs `cell` with its output shown. */
export function notebookProgram(previous: readonly string[], cell: string): string {
  if (previous.length === 0) return cell;
  const literal = (s: string) => JSON.stringify(Buffer.from(s, "utf8").toString("base64"));
  return `import base64 as _nb_b64, contextlib as _nb_ctx, io as _nb_io, linecache as _nb_lc, sys as _nb_sys, traceback as _nb_tb
_nb_previous = [${previous.map(literal).join(", ")}]
_nb_cell = _nb_b64.b64decode(${literal(cell)}).decode("utf-8")
def _nb_compile(source, name):
    _nb_lc.cache[name] = (len(source), None, source.splitlines(True), name)
    return compile(source, name, "exec")
_nb_sink = _nb_io.StringIO()
for _nb_i, _nb_src in enumerate(_nb_previous):
    try:
        with _nb_ctx.redirect_stdout(_nb_sink), _nb_ctx.redirect_stderr(_nb_sink):
            exec(_nb_compile(_nb_b64.b64decode(_nb_src).decode("utf-8"), f"<cell {_nb_i + 1}>"), globals())
    except BaseException:
        pass
    _nb_sink.seek(0)
    _nb_sink.truncate()
del _nb_sink, _nb_previous
try:
    exec(_nb_compile(_nb_cell, "<cell ${previous.length + 1}>"), globals())
except SystemExit:
    raise
except BaseException as _nb_error:
    _nb_sys.stdout.flush()
    _nb_tb.print_exception(type(_nb_error), _nb_error, _nb_error.__traceback__.tb_next)
    _nb_sys.exit(1)
`;
}
