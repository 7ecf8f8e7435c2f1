"""Warm workers: each submission still runs in a fresh sandboxed process, and nothing of one reaches the next.

The submissions here are handed to the worker without the load stage (as test_forgery's control is), so they
run unrestricted Python in the worker: what they leave behind is what any escape from the load stage's rules
could leave. Each is graded twice on the same warm worker; the second run must find nothing of the first.
"""
import json
import signal
import textwrap
import uuid

import pytest

import grader.pipeline.warm as warm
from grader.pipeline.grade import grade_sources
from grader.pipeline.load import MAIN, KernelSource
from grader.settings import Settings

from conftest import ROOT

SETTINGS = Settings()
# A stopped process is waited for until the puzzle's time runs out: a short limit for the attacks (their kernel
# itself takes well under a second alone, a few seconds when the other tests keep the cores busy).
ATTACKED = Settings(puzzle_timeout_s=8)
PARAMS = ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE")
HEADER = "import triton\nimport triton.language as tl\n"
KERNEL = '''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pass
'''
UNRESTRICTED = '''
real = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "catch_warnings"][0]()
real = real._module.__builtins__
imp = real["__import__"]
os, sys, pathlib = imp("os"), imp("sys"), imp("pathlib")
'''


def traces_payload(tag, plant=True):
    """Find the traces an earlier submission would leave, leave them (with `plant`), report both (the worker ends
    on it). A submission's module is executed in more than one process (its compiles may run in forks), so only
    a submission that plants nothing can tell that what it finds came from another."""
    return UNRESTRICTED + textwrap.dedent(f'''
        here = pathlib.Path.cwd()
        places = {{"a file in the warm worker's folder": here.parent.parent / "{tag}",
                   "a file in the previous use's folder": here.parent / "{tag}",
                   "a file in /tmp": pathlib.Path("/tmp/{tag}"),
                   "a file in the Triton cache": pathlib.Path(os.environ["TRITON_CACHE_DIR"]) / "{tag}",
                   "a file in HOME": pathlib.Path(os.environ["HOME"]) / "{tag}"}}

        def seen():
            found = [name for name, path in places.items() if path.exists()]
            found += ["a module attribute"] if real["hasattr"](imp("triton"), "{tag}") else []
            found += ["an environment variable"] if "{tag}" in os.environ else []
            for pid in os.listdir("/proc"):
                try:
                    if pid.isdigit() and real["open"](f"/proc/{{pid}}/comm").read().strip() == "{tag[:15]}":
                        found.append("a process")
                except real["OSError"]:
                    pass
            return found

        before = seen()
        for path in places.values() if {plant} else ():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("left behind")
            except real["OSError"]:
                pass
        if {plant}:
            real["setattr"](imp("triton"), "{tag}", True)
            os.environ["{tag}"] = "1"
        if {plant} and os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                imp("ctypes").CDLL(None).prctl(15, b"{tag[:15]}", 0, 0, 0)
                imp("time").sleep(120)
            os._exit(0)
        imp("time").sleep(0.2)
        raise real["RuntimeError"]("REPORT " + imp("json").dumps({{"before": before, "after": seen()}}))
    ''')


def source(module):
    return KernelSource("add_kernel", {MAIN: module}, {MAIN: []}, PARAMS)


def report(result):
    message = result.diagnostics[0].message
    assert "RuntimeError: REPORT " in message, message
    return json.loads(message.split("RuntimeError: REPORT ", 1)[1].splitlines()[0])


def idle_servers():
    """The warm workers waiting for a submission; a dead one left idle by an earlier test is dropped when next
    taken, so it is not counted."""
    return {worker.child.process.pid for idle in warm._IDLE.values() for worker in idle if worker.usable()}


def test_nothing_of_one_submission_reaches_the_next(course, isolation):
    # From an empty pool: workers another test prestarted (a `check` of this process) may still be joining it,
    # and a pool past its size closes the worker a grade gives back.
    warm._close_all()
    tag = f"planted{uuid.uuid4().hex[:8]}"
    first = grade_sources(course, {"vector_add": source(HEADER + traces_payload(tag) + KERNEL)},
                          settings=SETTINGS)["vector_add"]
    server = idle_servers()
    second = grade_sources(course, {"vector_add": source(HEADER + traces_payload(tag, plant=False) + KERNEL)},
                           settings=SETTINGS)["vector_add"]
    assert idle_servers() == server, "both ran on the same warm worker"
    planted = report(first)["after"]
    expected = {"a file in the warm worker's folder", "a file in the previous use's folder", "a file in the Triton cache",
                "a file in HOME", "a module attribute", "an environment variable", "a process"}
    if isolation == "bubblewrap":  # with resource limits only, /tmp is the machine's and stays
        assert "a file in /tmp" not in planted, "the sandbox's /tmp is read-only"
        assert set(planted) == expected
        assert report(second) == {"before": [], "after": []}
    else:
        assert expected <= set(planted)
        assert set(report(second)["before"]) <= {"a file in /tmp"}
        (__import__("pathlib").Path("/tmp") / tag).unlink(missing_ok=True)


def test_a_forged_worker_does_not_outlive_its_submission(course, isolation):
    """A submission that patches the worker's code forges its own pass (the control), not the next one's."""
    forging = UNRESTRICTED + textwrap.dedent('''
        worker = sys.modules["grader.pipeline.worker"]
        honest = worker._run
        def forged(kernel, case, order, puzzle_params, modules, *args, **kwargs):
            run = honest(kernel, case, order, puzzle_params, modules, *args, **kwargs)
            run["parents"]["out"].copy_(run["parents"]["x"] + run["parents"]["y"])
            run["writers"]["out"].fill_(0)
            run["error"] = None
            return run
        worker._run = forged
    ''')
    assert grade_sources(course, {"vector_add": source(HEADER + forging + KERNEL)},
                         settings=SETTINGS)["vector_add"].status == "pass"
    assert grade_sources(course, {"vector_add": source(HEADER + KERNEL)},
                         settings=SETTINGS)["vector_add"].status == "fail"


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
@pytest.mark.parametrize("compiles", ["in the worker", "in forks"])
def test_a_submission_that_attacks_its_warm_worker_harms_only_itself(course, isolation, how, compiles):
    """It signals the process it was forked from (kills it, or stops it so that it never answers): that
    submission gets a crash or its own verdict, and the next one a fresh warm worker and its own verdict. With
    cores to spare (a notebook's check), the worker compiles in forks of its own, which run the module first:
    the process they were forked from is then the worker itself."""
    spare_cores = compiles == "in forks"
    attack = UNRESTRICTED + f"os.kill(os.getppid(), {int(getattr(signal, how))})\nimp('time').sleep(0.5)\n"
    attacked = grade_sources(course, {"vector_add": source(HEADER + attack + KERNEL)},
                             settings=ATTACKED, spare_cores=spare_cores)["vector_add"]
    if how == "SIGKILL":  # the sandbox ends with the process it was forked from, or the worker dies
        assert attacked.status == "error" and attacked.diagnostics[0].kind == "crash"
    elif compiles == "in the worker":  # its results came; the worker that never said it ended is ended
        assert attacked.status == "fail" and attacked.diagnostics[0].kind == "unwritten_output"
    else:  # the worker stopped: its puzzle runs out of time
        assert attacked.status == "error" and attacked.diagnostics[0].kind == "timeout"
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    assert grade_sources(course, {"vector_add": source(solution)}, settings=SETTINGS,
                         spare_cores=spare_cores)["vector_add"].status == "pass"


def test_a_new_warm_worker_is_ready_before_its_folder_is_cleared(course, isolation):
    """Until it is ready the server writes its own compiler's files where the uses' folders go: clearing them
    under it made a correct kernel crash (a warm-up compile lost its files) in 2 of 5 whole-course checks."""
    worker = warm.WarmWorker(SETTINGS)
    try:
        worker.folder()
        assert worker.ready and worker.usable()
    finally:
        worker.close()
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    assert grade_sources(course, {"vector_add": source(solution)}, settings=SETTINGS)["vector_add"].status == "pass"
