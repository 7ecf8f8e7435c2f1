"""What a student waits for: a notebook's check cell, and `triton-course check` from a terminal.

  notebook, first check   in a Jupyter kernel, `from grader.notebook import check` (which starts a warm
                          worker), a pause while the student writes the kernel, then check("vector_add", kernel)
  notebook, next checks   the same check again (the kernel already imported), median of REPEATS; for vector add
                          and for matmul, whose estimate compiles the largest tiles. Timed until the cell
                          returns (the verdict shown) and until the estimate has joined the report
  check, one puzzle       `triton-course check solutions/ --puzzle vector_add`, a fresh process, median of 5
  check, whole course     `triton-course check solutions/`, a fresh process, median of 5
The commands are timed as a first check (--fresh: every kernel compiled and profiled) and as a check again of
kernels that have not changed since (what the compiler accepted and the profiles are kept, check_cache.py),
each in a cache folder of the benchmark's own. Each is timed with the performance estimate and without
(--no-performance). Targets: a notebook check within 1.5 s, the whole course within 8 s; the estimate adds at
most 20%. Results go to stdout and to bench/results/check_latency.md: a table for each Triton version,
this run's in place of its version's last (run it with the Python of each Triton a student may have: their
compiles differ), above the dated notes already there.
"""
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 5
COMMAND_REPEATS = 5
NOTEBOOK_SETUP = """
import statistics, time, warnings
warnings.simplefilter("ignore")
import importlib.util
from grader.course import load_course
from grader.notebook import check
spec = importlib.util.spec_from_file_location("solution", "solutions/{puzzle_id}.py")
solution = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solution)
kernel = getattr(solution, load_course().puzzle("{puzzle_id}").kernel)
time.sleep(5)  # the student writes the kernel
"""
# One check, timed inside the Jupyter kernel: until the cell returns (the verdict shown), and until the estimate
# has joined it (check() shows it from a thread of its own when it comes).
NOTEBOOK_CHECK = """
start = time.perf_counter()
result = check("{puzzle_id}", kernel, performance={performance})
verdict = time.perf_counter() - start
assert result.status == "pass"
while {performance} and result.performance is None:
    time.sleep(0.005)
print("timed", verdict, time.perf_counter() - start)
time.sleep(2)  # the student reads the report: the estimate's worker and picture are done before the next check
"""

EXPLANATION = """# What a check costs

The performance estimate (target: at most +20%) profiles each passing kernel at its benchmark size and compiles
it for sm_90 as the GPU stage launches it first. In a notebook the check cell returns with its verdict, graded
without the estimate, and the estimate is made by a worker of its own afterwards and joins the report when it
comes (the column "the estimate shown after": seconds from the start of the check). `triton-course check` makes
both in one worker per puzzle, one worker per core, and in that worker the sm_90 compile of the benchmark's
launch takes the place of the first case's. Checked again, a kernel unchanged since a check the compiler
accepted is neither compiled nor profiled again: its worker only interprets its cases.

A check forks its sandboxed worker from a warm one (grader/pipeline/warm.py) that imported torch and triton when
the notebook imported `grader.notebook`, or when the command started.

The compile costs what the student's Triton makes it cost: a table per Triton version the script ran with
(`bench/check_latency.py` with that Triton's Python), newest run of each.
"""


def notebook_seconds(puzzle_id, performance):
    """[(seconds until the check cell returned, until its estimate came)] of a first check and REPEATS more, in a
    real Jupyter kernel (the check shows its verdict first there)."""
    from jupyter_client.manager import start_new_kernel
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    printed = []

    def output(message):
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            raise RuntimeError("\n".join(message["content"]["traceback"]))
    try:
        client.execute_interactive(NOTEBOOK_SETUP.format(puzzle_id=puzzle_id), timeout=300, output_hook=output)
        for _ in range(1 + REPEATS):
            client.execute_interactive(NOTEBOOK_CHECK.format(puzzle_id=puzzle_id, performance=performance),
                                       timeout=300, output_hook=output)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    times = [tuple(map(float, line.split()[1:3])) for line in "".join(printed).splitlines()
             if line.startswith("timed ")]
    assert len(times) == 1 + REPEATS, printed
    return times


def command_seconds(argv):
    """Medians of COMMAND_REPEATS runs of a `triton-course check` from a fresh process, {(with the estimate,
    as a first check): seconds} for the four ways, run in turn (this machine's speed drifts: each way sees the
    same drift)."""
    ways = [(estimate, first) for estimate in (True, False) for first in (True, False)]
    times = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITON_COURSE_CACHE": cache}
        for estimate in (True, False):  # what the checks again find kept
            subprocess.run(argv + ([] if estimate else ["--no-performance"]), cwd=ROOT, check=True,
                           capture_output=True, env=env)
        for _ in range(COMMAND_REPEATS):
            for estimate, first in ways:
                extra = ([] if estimate else ["--no-performance"]) + (["--fresh"] if first else [])
                start = time.perf_counter()
                subprocess.run(argv + extra, cwd=ROOT, check=True, capture_output=True, env=env)
                times[estimate, first].append(time.perf_counter() - start)
    return {way: statistics.median(seconds) for way, seconds in times.items()}


def main():
    import torch
    import triton
    from grader.pipeline.sandbox import sandbox_kind
    notebook = {}
    for puzzle_id in ("vector_add", "matmul"):
        for performance in (True, False):
            times = notebook_seconds(puzzle_id, performance)
            notebook[puzzle_id, performance] = (times[0], tuple(statistics.median(t[i] for t in times[1:])
                                                                for i in (0, 1)))
    (first, next_checks), (first_plain, next_plain) = notebook["vector_add", True], notebook["vector_add", False]
    matmul, matmul_plain = notebook["matmul", True][1], notebook["matmul", False][1]
    cli = [sys.executable, "-m", "grader.cli", "check", "solutions/"]
    one = command_seconds(cli + ["--puzzle", "vector_add"])
    whole = command_seconds(cli)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    table = [f"### Triton {triton.__version__}", "",
             f"Machine: {cpu}, {os.cpu_count()} cores; sandbox: {sandbox_kind()}; Python {platform.python_version()}, "
             f"torch {torch.__version__}, triton {triton.__version__}.", "",
             "| check | wall clock | without the performance estimate | the estimate adds | the estimate shown after | "
             "target |",
             "|---|---:|---:|---:|---:|---:|",
             f"| notebook, vector add, first check (5 s after the import) | {first[0]:.2f} s | {first_plain[0]:.2f} s | "
             f"{first[0] / first_plain[0] - 1:+.0%} | {first[1]:.2f} s | 1.5 s |",
             f"| notebook, vector add, next checks (median of {REPEATS}) | {next_checks[0]:.2f} s | "
             f"{next_plain[0]:.2f} s | {next_checks[0] / next_plain[0] - 1:+.0%} | {next_checks[1]:.2f} s | 1.5 s |",
             f"| notebook, matmul, next checks (median of {REPEATS}) | {matmul[0]:.2f} s | {matmul_plain[0]:.2f} s | "
             f"{matmul[0] / matmul_plain[0] - 1:+.0%} | {matmul[1]:.2f} s | 1.5 s |",
             *[f"| `triton-course check solutions/{argv}`, {when} (median of {COMMAND_REPEATS}) | "
               f"{seconds[True, first]:.2f} s | {seconds[False, first]:.2f} s | "
               f"{seconds[True, first] / seconds[False, first] - 1:+.0%} | | {target} |"
               for argv, seconds, target in ((" --puzzle vector_add", one, ""), ("", whole, "8 s"))
               for first, when in ((True, "first check (`--fresh`)"), (False, "again, kernels unchanged"))], ""]
    print("\n".join(table))
    write_results("\n".join(table) + "\n", triton.__version__)


def write_results(table, version):
    """bench/results/check_latency.md: the explanation, a table for each Triton the script was run with (this
    run's in place of the same version's last one), then the dated notes already there."""
    results = ROOT / "bench" / "results" / "check_latency.md"
    earlier = results.read_text() if results.exists() else ""
    head, notes = (earlier[:earlier.index("\n## ")], earlier[earlier.index("\n## "):]) if "\n## " in earlier \
        else (earlier, "")
    tables = {found.group(1): found.group(0) for found in
              re.finditer(r"^### Triton (\S+)\n.*?(?=^### Triton |\Z)", head, re.M | re.S)}
    tables[version] = table
    ordered = sorted(tables.items(), key=lambda item: tuple(int(part) for part in re.findall(r"\d+", item[0])))
    results.write_text(EXPLANATION + "\n" + "\n".join(text.rstrip("\n") + "\n" for _, text in ordered) + notes)


if __name__ == "__main__":
    main()
