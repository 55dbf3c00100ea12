# SandboxFusion's /run_jupyter inside one sandboxed run: IPython's shell (the one ipykernel wraps) runs
# the cells in turn. Each cell's stdout and stderr (fds 1 and 2, so subprocesses too), displayed values
# and errors go out as one JSON line on the driver's own copy of stdout. Orders come on stdin as JSON:
# {"cells": [...], "cell_timeout": s, "budget": bytes, "restore": {name: base64} | null}.
import base64
import json
import os
import signal
import sys
import tempfile


def emit(fd, value):
    line = (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")
    os.write(fd, line)
    return len(line)


def main():
    orders = json.load(sys.stdin)
    # the kernel has no stdin: input() in a cell fails as it does without a frontend
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # the cells see the request's files and nothing of ours
    os.unlink(os.path.abspath(sys.argv[0]))
    for name, content in (orders.get("restore") or {}).items():
        with open(name, "wb") as file:
            file.write(base64.b64decode(content))
    results = os.dup(1)
    try:
        from IPython.core.displayhook import DisplayHook
        from IPython.core.displaypub import DisplayPublisher
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets import Type
        from traitlets.config import Config
    except ImportError as error:
        emit(results, {"missing": "IPython", "detail": str(error)})
        return 3

    cell = {}

    class Hook(DisplayHook):
        def start_displayhook(self):
            pass

        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            cell["display"].append(format_dict)

        def finish_displayhook(self):
            pass

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            cell["display"].append(data)

        def clear_output(self, wait=False):
            pass

    class Shell(InteractiveShell):
        displayhook_class = Type(Hook)
        display_pub_class = Type(Publisher)

        def _showtraceback(self, etype, evalue, stb):
            cell["error"].append({"ename": etype.__name__, "evalue": str(evalue), "traceback": stb})

        def ask_exit(self):
            self.exit_now = True

    config = Config()
    config.HistoryManager.enabled = False
    shell = Shell.instance(config=config)

    captured = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
    os.dup2(captured[0].fileno(), 1)
    os.dup2(captured[1].fileno(), 2)

    def take(file, limit):
        file.seek(0)
        data = file.read(limit + 1)
        file.seek(0)
        file.truncate()
        return data[:limit].decode("utf-8", "replace"), len(data) > limit

    timeout = orders.get("cell_timeout") or 0
    room = orders["budget"]

    # a cell past cell_timeout is interrupted as Jupyter interrupts a kernel: KeyboardInterrupt, raised
    # by Python's own handler so no frame of ours shows in its traceback
    signal.signal(signal.SIGALRM, signal.default_int_handler)
    for source in orders["cells"]:
        cell.clear()
        cell.update(display=[], error=[])
        try:
            if timeout > 0:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            shell.run_cell(source, store_history=True)
        except KeyboardInterrupt:
            # the alarm went off in the shell's own code, after the cell's
            cell["error"].append({"ename": "KeyboardInterrupt", "evalue": "", "traceback": []})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout.flush()
        sys.stderr.flush()
        # what no cell can print: the line with empty output, and room for the last line's mark
        bare = len(json.dumps({**cell, "stdout": "", "stderr": "", "truncated": True}).encode()) + 64
        if bare > room:
            cell["display"] = []
            for error in cell["error"]:
                error["traceback"] = []
            cell["truncated"] = True
            bare = len(json.dumps({**cell, "stdout": "", "stderr": "", "truncated": True}).encode()) + 64
        if bare > room:
            emit(results, {"budget_spent": True})
            return 0
        share = (room - bare) // 2
        cell["stdout"], cut_out = take(captured[0], share)
        cell["stderr"], cut_err = take(captured[1], share)
        if cut_out or cut_err:
            cell["truncated"] = True
        # JSON escapes make text longer than its bytes
        while len(json.dumps(cell, ensure_ascii=False).encode()) + 64 > room:
            cell["stdout"] = cell["stdout"][: len(cell["stdout"]) // 2]
            cell["stderr"] = cell["stderr"][: len(cell["stderr"]) // 2]
            cell["truncated"] = True
        room -= emit(results, cell)
        if shell.exit_now:
            break
    return 0


sys.exit(main())
