"""A warm worker: `python -P -m grader.pipeline.forkserver MODULE`, started in the sandbox like any worker.

Starting a worker costs seconds of importing torch and triton; grading a puzzle costs a fraction of one. This
process imports MODULE (with torch, triton and the compiler's back ends) once, runs no submission itself, and
for each request the grader writes on its standard input forks a fresh process that runs MODULE's
`main(request, results)` in the request's own folder. The fork starts from this process's memory, which no
submission has touched, so nothing of one submission reaches the next: its folder, its Triton cache and its
temporary files are its own (the sandbox's /tmp is read-only), and whatever it started is killed when it
ends (this process is their subreaper). This process is not dumpable, so a submission can neither trace it
nor read its memory or descriptors; one that signals it only ends the warm worker, which the grader then
replaces, blaming that submission alone.

Protocol (the grader's side is sandbox.WarmWorker): one line "ready" on standard output once warm; then for
each JSON line {"module", "folder", "request", "results"} on standard input, one line {"exit": code} when its process
has ended (code < 0: killed by that signal).
"""
import ctypes
import gc
import importlib
import json
import os
import sys
import traceback
from pathlib import Path

from .contain import PR_SET_CHILD_SUBREAPER, kill_descendants

PR_SET_DUMPABLE = 4


def main(module_name):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    gc.disable()  # the imports make only long-lived objects: the collector would walk them again and again
    module = importlib.import_module(module_name)
    warm_up = getattr(module, "warm_up", None)
    if warm_up:
        warm_up()
    gc.collect()
    # Out of the collector's sight for good: it would walk them in every fork, and its marks would copy their
    # pages into each fork's memory.
    gc.freeze()
    gc.enable()
    control, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # only this process writes replies
    print("ready", file=replies, flush=True)
    for line in control:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, control.fileno(), replies.fileno())
        _, status = os.waitpid(pid, 0)
        kill_descendants()
        print(json.dumps({"exit": os.waitstatus_to_exitcode(status)}), file=replies, flush=True)


def _child(request, *control):
    """The fresh process of one request: never returns."""
    code = 1
    try:
        for descriptor in control:
            os.close(descriptor)
        os.setsid()
        folder = Path(request["folder"])
        output = os.open(folder / "output", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        os.chdir(folder)
        os.environ.update(HOME=str(folder), TMPDIR=str(folder), TRITON_CACHE_DIR=str(folder / "triton-cache"))
        import tempfile
        tempfile.tempdir = None
        importlib.import_module(request["module"]).main(request["request"], request["results"])
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1])
