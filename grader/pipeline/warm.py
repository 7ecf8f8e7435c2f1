"""Warm workers: sandboxed processes that have imported torch and triton, forking a fresh worker per attempt.

Starting a worker costs seconds (importing torch and triton, loading the compiler's back ends); grading a
puzzle costs a fraction of one. A WarmWorker is started in the sandbox like any worker, once (forkserver.py
is its side), and each attempt of run_worker is a process forked from it in a folder of its own, so the
isolation between submissions is what it was: a fresh sandboxed process each, nothing of one reaching the
next. Warm workers wait in a pool per configuration for the life of the grader's process: a notebook's
next check and a class's next student start at once.

A warm worker that misbehaves (it dies, stops answering, answers garbage, or its folder cannot be made) is
retired and the attempt it was running gets the ending, as a worker started from nothing would.
"""
import atexit
import json
import os
import queue
import shutil
import stat
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from .sandbox import Child, ending, hand_over, sandbox_kind
from ..settings import DEFAULT

START_TIMEOUT_S = 300
IDLE_PER_CONFIGURATION = max(2, os.cpu_count() or 1)
REPLY_BYTES = 256
# bubblewrap's --die-with-parent follows the thread that started it: warm workers are started from one
# thread that lives as long as the process, not from the short-lived threads that use them.
_STARTER = ThreadPoolExecutor(1, thread_name_prefix="warm-worker-starter")


class WarmWorker:
    """One sandboxed fork server (forkserver.py) preloaded with `module`."""

    def __init__(self, settings=DEFAULT, hidden=(), module="grader.pipeline.worker"):
        self.settings, self.module = settings, module
        self.root = Path(tempfile.mkdtemp(prefix="triton-course-warm-"))
        argv = [sys.executable, "-P", "-m", "grader.pipeline.forkserver", module]
        self.child = _STARTER.submit(Child, argv, self.root, settings, hidden, control=True).result()
        self.replies = queue.Queue()
        self.ready = self.retired = False
        self.start_failure = None
        threading.Thread(target=self._read_replies, daemon=True).start()

    def _read_replies(self):
        stream = self.child.process.stdout
        for line in iter(lambda: stream.readline(REPLY_BYTES), b""):
            self.replies.put(line)
        self.replies.put(None)

    def folder(self):
        """A fresh, empty folder for one use, seen by the processes it forks; what earlier uses left is gone.
        The server is waited for first: until it is ready it writes in the same place (its compiler's files)."""
        self._await_ready()
        for entry in self.root.iterdir():
            _remove(entry)
        return Path(tempfile.mkdtemp(dir=self.root))

    def start(self, module, folder, request, results):
        """Fork a worker running `module`.main(request, results) in `folder` (inside one of self.folder())."""
        if not self._await_ready():
            return _Ended(self.start_failure)
        if self.child.uid is not None:
            hand_over(Path(folder).parent, self.child.uid)
        line = json.dumps({"module": module, "folder": str(folder), "request": str(request),
                           "results": str(results)})
        try:
            self.child.process.stdin.write(line.encode() + b"\n")
            self.child.process.stdin.flush()
        except OSError:
            return _Ended(self._retire_with_ending())
        return _WarmRun(self, Path(folder))

    def _await_ready(self):
        """True once the server has said it is ready; False (and its ending kept) when it never will."""
        if not self.ready and self.start_failure is None:
            if self.replies_get(START_TIMEOUT_S) == b"ready\n":
                self.ready = True
            else:
                self.start_failure = self._retire_with_ending()
        return self.ready

    def replies_get(self, timeout=None):
        try:
            return self.replies.get(timeout=timeout)
        except queue.Empty:
            return b""

    def usable(self):
        return not self.retired and self.child.poll() is None

    def _retire_with_ending(self):
        """The Ending of the fork server itself (it died, or said what it should not): it is retired."""
        self.retire()
        code = self.child.process.returncode
        return ending(code if code else 1, self.child.wait_output(), self.settings.memory_limit_bytes)

    def retire(self):
        """End the fork server and whatever runs in its sandbox; its folders stay for the run that uses them
        (run_worker goes on with workers started from nothing)."""
        self.retired = True
        if self.child.poll() is None:
            self.child.kill()
        self.child.wait_output()

    def close(self):
        self.retire()
        shutil.rmtree(self.root, ignore_errors=True)


class _WarmRun:
    """One forked worker, as run_worker sees a Child: poll, kill, ending, wait_output."""

    def __init__(self, worker, folder):
        self.worker, self.folder = worker, folder
        self.code = self.server_ending = None

    def poll(self):
        if self.code is None:
            line = self.worker.replies_get(timeout=0)
            if line == b"":
                return None
            try:
                code = json.loads(line)["exit"] if line else None
                if type(code) is not int:
                    raise ValueError
                self.code = code
            except (ValueError, TypeError, KeyError):  # the server ended, or said something else
                self.server_ending = self.worker._retire_with_ending()
                self.code = 1
        return self.code

    def kill(self):
        self.worker.retire()  # the whole sandbox: the worker and what it started end with it
        self.code = self.code if self.code is not None else -9

    def ending(self):
        if self.server_ending:
            return self.server_ending
        return ending(self.code, self.wait_output(), self.worker.settings.memory_limit_bytes)

    def wait_output(self):
        return _tail(self.folder / "output", self.worker.settings.output_cap_bytes)


class _Ended:
    """An attempt that could not start: the fork server's own ending."""

    def __init__(self, server_ending):
        self.server_ending = server_ending

    def poll(self):
        return 1

    def kill(self):
        pass

    def ending(self):
        return self.server_ending

    def wait_output(self):
        return ""


def _tail(path, cap):
    """The last `cap` bytes of a regular file as text; never follows a link or blocks."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return ""
        os.lseek(descriptor, max(0, info.st_size - cap), os.SEEK_SET)
        text = os.read(descriptor, cap).decode(errors="replace")
    finally:
        os.close(descriptor)
    return ("[output truncated]\n" if info.st_size > cap else "") + text


def _remove(path):
    """Remove what a worker left, whatever permissions it gave it."""
    def allow(function, name, error):
        try:
            os.chmod(os.path.dirname(name), 0o700)
            os.chmod(name, 0o700, follow_symlinks=False)
        except OSError:
            pass
        function(name)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, onerror=allow)
    else:
        path.unlink()


_IDLE = {}
_IDLE_LOCK = threading.Lock()


def _configuration(settings, hidden, module):
    return (sandbox_kind(), settings.memory_limit_bytes, settings.cpu_limit_s, settings.file_limit_bytes,
            settings.process_limit, settings.output_cap_bytes, tuple(sorted(str(Path(p).resolve()) for p in hidden)),
            module, os.environ.get("PYTHONPATH"))


@contextmanager
def warm_worker(settings=DEFAULT, hidden=(), module="grader.pipeline.worker"):
    """A warm worker of this configuration for the `with` block: an idle one, or a new one."""
    key = _configuration(settings, hidden, module)
    worker = None
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(key, [])
        while idle and worker is None:
            worker = idle.pop()
            if not worker.usable():
                worker.close()
                worker = None
    worker = worker or WarmWorker(settings, hidden, module)
    try:
        yield worker
    finally:
        with _IDLE_LOCK:
            if worker.usable() and len(_IDLE[key]) < IDLE_PER_CONFIGURATION:
                _IDLE[key].append(worker)
                worker = None
        if worker:
            worker.close()


def prestart(settings=DEFAULT, hidden=(), module="grader.pipeline.worker"):
    """Start a warm worker in the background for the first check to come (a notebook's import)."""
    def start():
        worker = WarmWorker(settings, hidden, module)
        with _IDLE_LOCK:
            _IDLE.setdefault(_configuration(settings, hidden, module), []).append(worker)
    threading.Thread(target=start, daemon=True).start()


@atexit.register
def _close_all():
    with _IDLE_LOCK:
        workers = [worker for idle in _IDLE.values() for worker in idle]
        _IDLE.clear()
    for worker in workers:
        worker.close()
