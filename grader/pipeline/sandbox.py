"""Run the worker in a child process: bubblewrap when the machine has it, resource limits always.

Under bubblewrap (Debian package `bubblewrap`) the worker sees a read-only file system with its own empty
/tmp, one writable scratch directory, no network, and its own process namespace (it cannot see or signal
the grader); the course's solutions and the paths the caller names (a gradebook, the other students'
submissions) are hidden behind empty directories. Without bubblewrap the report says that only resource
limits applied. Either way the child has a memory limit, a CPU-time limit, a cap on file sizes, and a
wall-clock limit per puzzle, and whatever it prints is capped.
"""
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GRADER_ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class Ending:
    """How a worker process ended when it did not finish its work."""
    kind: str  # timeout, crash, out_of_memory, exit
    message: str


def sandbox_kind():
    """'bubblewrap' when it is installed and works here, else 'resource limits only'."""
    global _SANDBOX
    if _SANDBOX is None:
        works = False
        if shutil.which("bwrap"):
            probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "true"],
                                   capture_output=True)
            works = probe.returncode == 0
        _SANDBOX = "bubblewrap" if works else "resource limits only"
    return _SANDBOX


_SANDBOX = None


def command(argv, scratch, hidden=(), gpu=False):
    """The argv that runs `argv` sandboxed, writing only to `scratch` (and using the GPUs if `gpu`)."""
    if sandbox_kind() != "bubblewrap":
        return argv
    devices = ["--dev-bind", "/dev", "/dev"] if gpu else ["--dev", "/dev"]
    wrapped = ["bwrap", "--ro-bind", "/", "/", *devices, "--proc", "/proc", "--tmpfs", "/tmp"]
    # The grader and its Python stay visible (read-only) even where they live under /tmp.
    for path in dict.fromkeys([GRADER_ROOT, Path(sys.prefix), Path(sys.base_prefix),
                               Path(os.path.realpath(sys.executable)).parent.parent]):
        wrapped += ["--ro-bind", str(path), str(path)]
    wrapped += ["--bind", str(scratch), str(scratch), "--unshare-all", "--die-with-parent", "--new-session",
                "--chdir", str(scratch)]
    for path in [GRADER_ROOT / "solutions", *hidden]:
        path = Path(path).resolve()
        if path.is_dir() and not _contains(path, GRADER_ROOT / "grader") and not _contains(path, Path(sys.prefix)):
            wrapped += ["--tmpfs", str(path)]
    return wrapped + argv


def _contains(directory, path):
    return path.resolve() == directory or directory in path.resolve().parents


def environment(scratch):
    env = {key: value for key, value in os.environ.items() if key not in ("TRITON_INTERPRET", "PYTHONSTARTUP")}
    env.update(HOME=str(scratch), TRITON_CACHE_DIR=str(Path(scratch) / "triton-cache"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(GRADER_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                                 if p]))
    return env


def _limits(memory_bytes, cpu_seconds, file_bytes):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))  # RLIM_INFINITY for CUDA's address space
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


class Child:
    """A running worker whose output is drained into a capped buffer."""

    def __init__(self, argv, scratch, settings, hidden=(), gpu=False):
        self.cap = settings.output_cap_bytes
        self.memory_limit = settings.memory_limit_bytes
        self.output = bytearray()
        self.truncated = False
        self.process = subprocess.Popen(
            command(argv, scratch, hidden, gpu), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=environment(scratch), cwd=scratch,
            preexec_fn=_limits(settings.memory_limit_bytes, settings.cpu_limit_s, settings.file_limit_bytes))
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        for chunk in iter(lambda: self.process.stdout.read(65536), b""):
            room = self.cap - len(self.output)
            if room > 0:
                self.output += chunk[:room]
            if len(chunk) > max(room, 0):
                self.truncated = True

    def poll(self):
        return self.process.poll()

    def kill(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def wait_output(self):
        self.reader.join(timeout=5)
        text = self.output.decode(errors="replace")
        return text + ("\n[output truncated]" if self.truncated else "")

    def ending(self):
        """Why the process ended without finishing (its return code is not 0)."""
        code = self.process.returncode
        tail = self.wait_output().strip()[-2000:]
        if "MemoryError" in tail:
            return Ending("out_of_memory", f"the worker ran out of memory (limit {self.memory_limit / 2 ** 30:g} GiB)")
        # A signal ends a process with -signal, or with 128 + signal when bubblewrap reports it.
        number = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else None
        if number == signal.SIGXCPU:
            return Ending("timeout", "the worker used up its CPU time")
        if number is not None:
            name = signal.Signals(number).name
            return Ending("crash", f"the worker was killed by {name}" + (f"\n{tail}" if tail else ""))
        return Ending("crash", f"the worker exited with code {code}" + (f"\n{tail}" if tail else ""))


def run_worker(request, results, scratch, settings, puzzle_ids, hidden=(), module="grader.pipeline.worker", gpu=False,
               progress=None):
    """Run the worker until every puzzle has a result file or an Ending; returns {puzzle id: Ending}.

    A puzzle that hangs (no case done for `puzzle_timeout_s`), crashes or exhausts memory gets its Ending,
    and a fresh worker takes up the rest. `progress(puzzle id, cases done)` follows the worker's progress.
    """
    endings = {}
    while True:
        pending = [p for p in puzzle_ids if not (results / f"{p}.pt").exists() and p not in endings]
        if not pending:
            return endings
        child = Child([sys.executable, "-m", module, str(request), str(results)], scratch, settings, hidden, gpu)
        last_progress = time.monotonic()
        done, steps = set(), {}
        while child.poll() is None:
            finished = {p for p in pending if (results / f"{p}.pt").exists()}
            counts = {p: _read_count(results / f"{p}.progress") for p in pending}
            if finished != done or counts != steps:
                done, steps, last_progress = finished, counts, time.monotonic()
                if progress:
                    for puzzle_id, count in counts.items():
                        progress(puzzle_id, count)
            if time.monotonic() - last_progress > settings.puzzle_timeout_s:
                child.kill()
                stuck = next(p for p in pending if p not in done)
                endings[stuck] = Ending("timeout", f"no result after {settings.puzzle_timeout_s:g} s: does a loop "
                                                   "in the kernel never end?")
                break
            time.sleep(0.05)
        else:
            stuck = [p for p in pending if not (results / f"{p}.pt").exists()]
            if stuck:
                started = [p for p in stuck if (results / f"{p}.started").exists()]
                endings[(started or stuck)[0]] = child.ending()
        child.wait_output()
        # The worker skips puzzles that already have a result; the request lists the rest in order.
        _drop_finished(request, results, endings)


def _read_count(path):
    try:
        return int(path.read_text() or 0)
    except (OSError, ValueError):
        return 0


def _drop_finished(request, results, endings):
    import torch
    data = torch.load(request, weights_only=True)
    data["puzzles"] = [job for job in data["puzzles"]
                       if not (results / f"{job['id']}.pt").exists() and job["id"] not in endings]
    torch.save(data, request)
