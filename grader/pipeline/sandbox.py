"""Run the worker in a child process: bubblewrap when the machine has it, resource limits always.

Under bubblewrap (Debian package `bubblewrap`) the worker's file system is built from nothing: the system's
/usr and /etc, the Python it runs on, the grader's own package and one writable scratch directory, all
read-only but the scratch; an empty, read-only /tmp of its own, no network, its own process namespace (it
cannot see or signal the grader), and, when the grader runs as root, an unprivileged user of its own. The checkout (its .git, the
solutions, course.yml), home directories, the nbgrader course and the other students' submissions are not
in it at all. Without bubblewrap the report says that only resource limits applied; the worker then runs in
its own session and a small containing process ends everything it started when it ends.

Either way the child starts with an environment of a few variables (nothing of the grader's), has a memory
limit, a CPU-time limit, a cap on file sizes and on processes, and a wall-clock limit per puzzle, and
whatever it prints is capped. What it leaves in the scratch directory is read back without following links
or blocking (protocol.py).
"""
import ctypes
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .results import printable

GRADER_ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = GRADER_ROOT / "grader"
SYSTEM_DIRECTORIES = ("/usr", "/etc", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
GPU_DIRECTORIES = ("/sys", "/run/nvidia-persistenced")
EXIT_GRACE_S = 5  # a worker with every result written that has not ended by then is ended
UNPRIVILEGED_UIDS = (100_000, 60_000)  # a range of user ids no account uses, one per concurrent sandbox


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


def sandbox_description(settings):
    """How a worker is isolated here, in words for the report."""
    if sandbox_kind() == "bubblewrap":
        user = "an unprivileged user of its own" if _drops_to_own_user() else "the grader's user in its own namespace"
        return (f"bubblewrap: a file system of the system, Python and the grader's package only (read-only), an empty "
                f"read-only /tmp, no network, its own processes, {user}, at most {settings.process_limit} processes")
    limit = f"at most {settings.process_limit} processes" if os.geteuid() != 0 else \
        "no process limit (the grader runs as root)"
    return (f"resource limits only: its own session, ended with everything it started, a minimal environment, "
            f"{limit}; it can read what the grader's user can read (install bubblewrap to isolate it)")


def _drops_to_own_user():
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


_next_uid = 0


def _unprivileged_uid():
    """A user id for one sandbox: separate sandboxes count their processes apart."""
    global _next_uid
    _next_uid += 1
    base, span = UNPRIVILEGED_UIDS
    return base + (os.getpid() * 97 + _next_uid) % span


def command(argv, scratch, hidden=(), gpu=False, uid=None):
    """The argv that runs `argv` sandboxed, writing only to `scratch` (and using the GPUs if `gpu`)."""
    if sandbox_kind() != "bubblewrap":
        return [sys.executable, "-I", "-S", str(PACKAGE / "pipeline" / "contain.py"), *argv]
    wrapped = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if os.geteuid() != 0:
        wrapped.append("--unshare-user")
    wrapped += ["--die-with-parent", "--new-session", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
    wrapped += ["--dev-bind", "/dev", "/dev"] if gpu else ["--dev", "/dev"]
    for directory in SYSTEM_DIRECTORIES + (GPU_DIRECTORIES if gpu else ()):
        path = Path(directory)
        if path.is_symlink():  # /lib -> usr/lib on a merged /usr
            wrapped += ["--symlink", os.readlink(path), directory]
        elif path.exists():
            wrapped += ["--ro-bind", directory, directory]
    binds = [("--ro-bind", path) for path in _python_paths()] + [("--ro-bind", PACKAGE), ("--bind", Path(scratch))]
    made = set()
    for option, path in binds:
        for parent in reversed(path.parents):  # bubblewrap would make them 0700: the sandbox's user could not pass
            if parent not in (Path("/"), Path("/tmp")) and parent not in made and \
                    not any(_contains(Path(d), parent) for d in SYSTEM_DIRECTORIES):
                wrapped += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        wrapped += [option, str(path), str(path)]
    for path in hidden:
        path = Path(path).resolve()
        if path.is_dir() and any(_contains(root, path) for root in _python_paths()) and not _contains(path, PACKAGE):
            wrapped += ["--tmpfs", str(path)]
    wrapped += ["--remount-ro", "/tmp", "--chdir", str(scratch)]  # the scratch directory is the one place to write
    if uid is not None:
        wrapped += ["--", "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                    "--bounding-set=-all"]
    return wrapped + argv


def _python_paths():
    """The directories the worker's Python needs: its installation, its environment, its site-packages and the
    PYTHONPATH it was given; of the checkout only its virtual environment (the grader's package is bound on its
    own). Never the folder a script was started from or the working directory, which sys.path may also hold:
    that is where an instructor keeps the course. Nothing under the system directories, which are bound whole."""
    import site
    prefixes = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.exec_prefix).resolve(),
                Path(os.path.realpath(sys.executable)).parent.parent}
    candidates = set(prefixes) | {Path(p).resolve() for p in site.getsitepackages() + [site.getusersitepackages()]}
    candidates |= {Path(p).resolve() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    kept = []
    for path in sorted((p for p in candidates if p.is_dir()), key=lambda p: len(p.parts)):
        if _contains(path, GRADER_ROOT) or path == Path(tempfile.gettempdir()).resolve():
            continue  # the checkout, a folder that holds it, or the shared temporary folder
        if _contains(GRADER_ROOT, path) and not any(_contains(prefix, path) for prefix in prefixes):
            continue  # inside the checkout: only its virtual environment
        if any(_contains(Path(d), path) for d in SYSTEM_DIRECTORIES) or any(_contains(k, path) for k in kept):
            continue
        kept.append(path)
    return kept


def _contains(directory, path):
    """True when `path` is `directory` or inside it."""
    directory, path = Path(directory), Path(path)
    return path == directory or directory in path.parents


def environment(scratch, gpu=False):
    """The worker's whole environment: nothing of the grader's but what a GPU needs to be found."""
    scratch = Path(scratch)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
           "HOME": str(scratch), "TMPDIR": str(scratch), "LANG": "C.UTF-8",
           "TRITON_CACHE_DIR": str(scratch / "triton-cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(GRADER_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(
               os.pathsep) if p and not _contains(GRADER_ROOT, Path(p).resolve())])}
    if gpu:
        env.update({k: v for k, v in os.environ.items() if k.startswith(("CUDA_", "NVIDIA_")) or
                    k in ("LD_LIBRARY_PATH", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH")})
    return env


def _process_limit(settings):
    """RLIMIT_NPROC counts every process of the user: the limit is what the user runs now, plus the budget."""
    if os.geteuid() == 0:
        return settings.process_limit  # applies to the unprivileged user the sandbox switches to
    uid, running = os.getuid(), 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                running += 1
        except OSError:
            continue
    return running + settings.process_limit


def _limits(settings):
    processes = _process_limit(settings)

    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (settings.memory_limit_bytes, settings.memory_limit_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (settings.cpu_limit_s, settings.cpu_limit_s + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (settings.file_limit_bytes, settings.file_limit_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    return apply


def conceal(values):
    """Keep `values` (the hidden seed) out of what other processes of this user can read of this one: its
    command line in /proc is rewritten, and the process is made non-dumpable, which closes its environment and
    memory in /proc to them."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
        with open("/proc/self/stat") as handle:
            stat = handle.read()
        fields = stat[stat.rindex(")") + 2:].split()
        start, end = int(fields[45]), int(fields[46])
        memory = ctypes.string_at(start, end - start)
    except (OSError, ValueError, IndexError, AttributeError):
        return
    hidden = []
    for argument in memory.split(b"\0"):
        text = argument.decode(errors="replace")
        for value in values:
            if text == value or text.endswith(f"={value}"):
                argument = argument[:len(argument) - len(value)] + b"*" * len(value)
        hidden.append(argument)
    ctypes.memmove(start, b"\0".join(hidden), end - start)


class Child:
    """A running worker whose output is drained into a capped buffer.

    `control`: the worker talks to the grader (forkserver.py): its standard input and output are pipes for
    that (`self.process.stdin`, `self.process.stdout`), and only its standard error is drained."""

    def __init__(self, argv, scratch, settings, hidden=(), gpu=False, control=False):
        self.cap = settings.output_cap_bytes
        self.memory_limit = settings.memory_limit_bytes
        self.output = bytearray()
        self.truncated = False
        self.uid = None
        if sandbox_kind() == "bubblewrap" and _drops_to_own_user():
            self.uid = _unprivileged_uid()
            hand_over(scratch, self.uid)
        self.process = subprocess.Popen(
            command(argv, scratch, hidden, gpu, self.uid), stdin=subprocess.PIPE if control else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE if control else subprocess.STDOUT,
            env=environment(scratch, gpu), cwd=scratch, preexec_fn=_limits(settings))
        drained = self.process.stderr if control else self.process.stdout
        self.reader = threading.Thread(target=self._drain, args=(drained,), daemon=True)
        self.reader.start()

    def _drain(self, stream):
        for chunk in iter(lambda: stream.read(65536), b""):
            room = self.cap - len(self.output)
            if room > 0:
                self.output += chunk[:room]
            if len(chunk) > max(room, 0):
                self.truncated = True

    def poll(self):
        return self.process.poll()

    def kill(self):
        try:  # the containing process (or bubblewrap) ends what the worker started, then everything goes
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=2)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
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
        return ending(self.process.returncode, self.wait_output(), self.memory_limit)


def ending(code, output, memory_limit):
    """The Ending of a worker that exited with `code` (negative: the signal that ended it) after printing
    `output`."""
    tail = printable(output.strip()[-2000:], keep="\n\t")
    if "MemoryError" in tail:
        return Ending("out_of_memory", f"the worker ran out of memory (limit {memory_limit / 2 ** 30:g} GiB)")
    # A signal ends a process with -signal, or with 128 + signal when bubblewrap reports it.
    number = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else None
    if number == signal.SIGXCPU:
        return Ending("timeout", "the worker used up its CPU time")
    if number is not None:
        try:
            name = signal.Signals(number).name
        except ValueError:  # a real-time signal has no name
            name = f"signal {number}"
        return Ending("crash", f"the worker was killed by {name}" + (f"\n{tail}" if tail else ""))
    return Ending("crash", f"the worker exited with code {code}" + (f"\n{tail}" if tail else ""))


def hand_over(scratch, uid):
    """Make the scratch directory (and what is in it) the sandbox user's, so that it can write its results."""
    for root, directories, files in os.walk(scratch):
        for name in [root, *(os.path.join(root, n) for n in directories + files)]:
            os.lchown(name, uid, uid)


def run_worker(jobs, scratch, settings, hidden=(), module="grader.pipeline.worker", gpu=False, progress=None,
               shared=None, warm=None):
    """Run the worker on `jobs` (dicts with an "id") until every job has a result file in `scratch`/results or
    an Ending; returns {job id: Ending}.

    Each worker started gets its request written afresh from the grader's memory into a folder made for it
    (nothing a worker leaves behind is read as a request). `shared`: request fields every job needs. A job that
    takes longer than `puzzle_timeout_s`, crashes or exhausts memory gets its Ending, and a fresh worker
    takes up the rest. `progress(job id, cases done)` follows the worker's progress. `warm`: a WarmWorker
    (warm.py) that forks each worker from a process that has imported everything, `scratch` being one of its
    folders; without it, or once it is retired (a worker hung or took it down), each worker is a process
    started from nothing.
    """
    import torch
    scratch = Path(scratch)
    results = scratch / "results"
    results.mkdir(exist_ok=True)
    endings = {}
    while True:
        pending = [job for job in jobs if not _exists(results / f"{job['id']}.pt") and job["id"] not in endings]
        if not pending:
            return endings
        folder = Path(tempfile.mkdtemp(prefix="attempt", dir=scratch))
        request = folder / "request.pt"
        torch.save({**(shared or {}), "puzzles": pending}, request)
        pending = [job["id"] for job in pending]
        if warm and warm.usable():
            child = warm.start(module, folder, request, results)
        else:
            child = Child([sys.executable, "-m", module, str(request), str(results)], scratch, settings, hidden, gpu)
        # A job's time runs from the end of the one before it (or the worker's start), whatever its cases' progress:
        # the limit is a puzzle's, and a kernel that takes most of it in every case would otherwise hold a class's
        # worker for as many limits as the puzzle has cases.
        job_started = time.monotonic()
        done, steps = set(), {}
        while child.poll() is None:
            # The worker takes its jobs in order: only the first without a result can be making progress (looking
            # at every job each tick cost a class of 70 jobs a core's fifth).
            finished = set(done)
            for p in pending:
                if p in finished:
                    continue
                if not _exists(results / f"{p}.pt"):
                    break
                finished.add(p)
            current = next((p for p in pending if p not in finished), None)
            counts = {**steps, **({current: _read_count(results / f"{current}.progress")} if current else {})}
            if finished != done:
                job_started = time.monotonic()
            if finished != done or counts != steps:
                done, steps = finished, counts
                if progress:
                    for job_id, count in counts.items():
                        progress(job_id, count)
            finished_waiting = len(done) == len(pending) and time.monotonic() - job_started > EXIT_GRACE_S
            if finished_waiting or time.monotonic() - job_started > settings.puzzle_timeout_s:
                child.kill()
                stuck = next((p for p in pending if not _exists(results / f"{p}.pt")), None)
                if stuck:  # else every result came before the worker hung on its way out
                    endings[stuck] = Ending("timeout", f"no result after {settings.puzzle_timeout_s:g} s: does a "
                                                       "loop in the kernel never end?")
                break
            time.sleep(0.02)
        else:
            stuck = [p for p in pending if not _exists(results / f"{p}.pt")]
            if stuck:
                started = [p for p in stuck if _exists(results / f"{p}.started")]
                endings[(started or stuck)[0]] = child.ending()
        child.wait_output()


def _exists(path):
    """True for anything at `path`, a dangling link included (what it is is checked when it is read)."""
    return os.path.lexists(path)


def _read_count(path):
    from .load.files import UnreadableFile, read_regular_file
    try:
        return int(read_regular_file(path, 32) or 0)
    except (UnreadableFile, ValueError):
        return 0
