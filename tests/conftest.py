import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from grader.course import load_course
from grader.pipeline.grade import grade_sources, grade_submission
from grader.pipeline.load import Loaded, SubmissionError, load_submission
from grader.pipeline.results import Diagnostic, PuzzleResult
from grader.settings import DEFAULT

ROOT = Path(__file__).resolve().parent.parent
BUGS = ROOT / "tests" / "bugs"


# A vector add whose pruner lets its unmasked configuration on after the check's launches, by state it keeps.
COUNTING_PRUNER = """import triton
import triton.language as tl

{state}


def early_config_prune(configs, named_args, **kwargs):
    {count}
    return [config for config in configs if config.kwargs["MASKED"] or {calls} > 1000]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": True}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": early_config_prune})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements if MASKED else None
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
"""


def counting(state, count, calls):
    """The kernel with the module-level `state`, the pruner's statement `count` and its expression `calls`."""
    return COUNTING_PRUNER.replace("{state}", state).replace("{count}", count).replace("{calls}", calls)


@pytest.fixture(scope="session", autouse=True)
def check_cache(tmp_path_factory):
    """`triton-course check` keeps the compiler's acceptances in the user's cache folder; the tests' checks keep
    theirs in a folder of the session's (and their subprocesses', which inherit the environment)."""
    folder = tmp_path_factory.mktemp("compile-cache")
    os.environ["TRITON_COURSE_CACHE"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def course():
    return load_course(ROOT / "course.yml")


@pytest.fixture(scope="session")
def solutions(course):
    """{puzzle id: PuzzleResult} of every reference solution, graded once for the session."""
    return grade_files(course, {p.id: (p.id, p.solution) for p in course.puzzles})


@pytest.fixture(params=["bubblewrap", "resource limits only"])
def isolation(request, monkeypatch):
    """Each way the grader can run a worker: under bubblewrap (where it is installed), and with resource limits
    only."""
    import grader.pipeline.sandbox as sandbox
    if request.param == "bubblewrap" and sandbox.sandbox_kind() != "bubblewrap":
        pytest.skip("bubblewrap is not installed here (apt-get install bubblewrap)")
    monkeypatch.setattr(sandbox, "_SANDBOX", request.param)
    return request.param


@pytest.fixture
def grade(course):
    """Grade a path and return the report."""
    def run(path, puzzle=None, seed=0, settings=DEFAULT):
        return grade_submission(course, path, [puzzle] if puzzle else None, seed, settings)
    return run


@pytest.fixture
def worker_requests(monkeypatch):
    """The jobs of each sandboxed worker run the grading pipeline starts, one list per run, as they are started."""
    import grader.pipeline.grade as pipeline
    started = []
    run_worker = pipeline.run_worker

    def recording(jobs, *args, **kwargs):
        started.append(list(jobs))
        return run_worker(jobs, *args, **kwargs)
    monkeypatch.setattr(pipeline, "run_worker", recording)
    return started


def grade_files(course, files, settings=DEFAULT, hidden_seed=None):
    """{key: PuzzleResult} for {key: (puzzle id, file)}, all graded by one worker: as each file alone would be
    (with the instructor's hidden cases of `hidden_seed`, as `grade --hidden-seed` and nbgrader grade it)."""
    from grader.course import with_hidden_cases
    sources, puzzles, early = {}, {}, {}
    for key, (puzzle_id, path) in files.items():
        try:
            loaded = load_submission(path, course, [puzzle_id])[puzzle_id]
        except SubmissionError as error:  # as `triton-course grade` records it: an error verdict worth 0
            loaded = Loaded("error", diagnostics=[Diagnostic("load_error", str(error))])
        if loaded.status == "found":
            puzzle = course.puzzle(puzzle_id)
            sources[key] = loaded.source
            puzzles[key] = puzzle if hidden_seed is None else with_hidden_cases(puzzle, hidden_seed)
        else:
            early[key] = loaded
    early = {key: PuzzleResult(puzzle_id, "", item.status, 0, course.puzzle(files[key][0]).points,
                               diagnostics=item.diagnostics) for key, item in early.items()
             for puzzle_id in [files[key][0]]}
    seed = 0 if hidden_seed is None else hidden_seed
    return {**grade_sources(course, sources, seed, settings=settings, puzzles=puzzles, workers=os.cpu_count()),
            **early}


def graded_cases(course, puzzle_id, path):
    """The cases grading the kernel of `path` runs: the puzzle's, and its largest again at each block size the GPU
    stage may launch that kernel with (course.with_configuration_cases)."""
    from grader.course import CONFIGURATION_CASES_CHECKED
    source = load_submission(path, course, [puzzle_id])[puzzle_id].source
    return source.with_configuration_cases(course.puzzle(puzzle_id), CONFIGURATION_CASES_CHECKED).cases


def catalogued_bugs():
    """(puzzle id, bug file, expected diagnostic kind) for every bug in tests/bugs."""
    bugs = []
    for path in sorted(BUGS.glob("*/*.py")):
        expected = re.search(r"^expect: (\w+)$", path.read_text(), re.MULTILINE)
        assert expected, f"{path} has no 'expect: KIND' line in its docstring"
        bugs.append((path.parent.name, path, expected.group(1)))
    return bugs


def write_notebook(path, cells):
    """A minimal notebook whose code cells are `cells` (strings)."""
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None,
                           "outputs": [], "source": source} for i, source in enumerate(cells)]}
    path.write_text(json.dumps(notebook))
    return path


def execute_notebook(notebook, allow_errors=False):
    """Run `notebook` top to bottom in a fresh python3 kernel, in the repository's root, and return it.

    The kernel is reached over Unix sockets in a folder of its own. Over TCP, jupyter_client picks free ports and
    lets them go before the kernel binds them, so kernels started at once by the test processes can take each
    other's ports ("Address already in use", the kernel dies before it answers)."""
    import tempfile

    from jupyter_client import KernelManager
    from nbclient import NotebookClient
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:  # short: a socket's path has ~100 bytes at most
        manager = KernelManager(kernel_name="python3", transport="ipc", connection_file=f"{sockets}/connection.json")
        NotebookClient(notebook, km=manager, timeout=300, kernel_name="python3", allow_errors=allow_errors,
                       resources={"metadata": {"path": str(ROOT)}}).execute()
    return notebook


@contextmanager
def jupyter_lab(root, settings, env=None):
    """A JupyterLab server on `root` with JupyterLab settings from the folder `settings`; yields (url, token).

    The server takes a port the system gives it and says which in its runtime folder, and its kernels are reached
    over Unix sockets: ports picked free and bound later can be taken by the other test processes meanwhile."""
    import secrets
    import tempfile
    import urllib.request
    token = secrets.token_hex(16)
    runtime = Path(tempfile.mkdtemp(prefix="lab-"))  # short: a kernel's socket path has ~100 bytes at most
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", "--port=0",
               f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}", "--KernelManager.transport=ipc"]
    if os.getuid() == 0:
        command.append("--allow-root")
    env = {**os.environ, "TRITON_INTERPRET": "1", "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTER_RUNTIME_DIR": str(runtime),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]), **(env or {})}
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = None
        for _ in range(240):
            started = [json.loads(info.read_text() or "{}") for info in runtime.glob("jpserver-*.json")]
            if started and "port" in started[0]:
                url = f"http://127.0.0.1:{started[0]['port']}"
                try:
                    urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=1)
                    break
                except OSError:
                    pass
            assert server.poll() is None, "jupyter lab stopped before it served"
            time.sleep(0.5)
        assert url, "jupyter lab wrote no jpserver-*.json in two minutes"
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        shutil.rmtree(runtime, ignore_errors=True)


@contextmanager
def dask_cluster(directory, workers, worker_options=(), worker_env=None):
    """(scheduler address, [worker processes]): a real Dask scheduler and `workers` single-thread workers on
    loopback, started with Dask's own commands, their logs in `directory`; stopped when the block ends."""
    dask = Path(sys.executable).parent / "dask"
    # Dask's command, or its modules where the environment has no scripts (packages put on PYTHONPATH).
    scheduler, worker = ([str(dask), "scheduler"], [str(dask), "worker"]) if dask.exists() else \
        ([sys.executable, "-m", "distributed.cli.dask_scheduler"], [sys.executable, "-m", "distributed.cli.dask_worker"])
    scheduler_file = Path(directory) / "scheduler.json"
    logs = [open(Path(directory) / f"{name}.log", "w") for name in ["scheduler"] + [f"worker{i}" for i in range(workers)]]

    def start(argv, log, env=None):
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=directory,
                                env={**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(
                                    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])})

    processes = [start([*scheduler, "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                        "--scheduler-file", str(scheduler_file)], logs[0])]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        for index in range(workers):
            processes.append(start([*worker, address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                    "--host", "127.0.0.1", "--name", f"worker{index}", *worker_options],
                                   logs[index + 1], worker_env))
        from distributed import Client
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield address, processes[1:]
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for log in logs:
            log.close()


def in_parallel(argv, paths, env=None):
    """[(CompletedProcess, files in its share)] of `argv + share` for shares of `paths`, one process a core."""
    shares = [paths[i::os.cpu_count() or 1] for i in range(os.cpu_count() or 1)]
    processes = [(subprocess.Popen(argv + [str(p) for p in share], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, cwd=ROOT, env=env), share) for share in shares if share]
    results = []
    for process, share in processes:
        out, err = process.communicate()
        results.append((subprocess.CompletedProcess(process.args, process.returncode, out, err), len(share)))
    return results
