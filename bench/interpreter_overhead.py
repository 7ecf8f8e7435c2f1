"""What checking costs: the grader's interpretation against Triton's stock interpreter, on the same cases.

For every case of every puzzle, with the reference solutions, this times
  stock     the kernel launched as students launch it, TRITON_INTERPRET=1, no checks (in a child process,
            since the variable must be set before triton is imported);
  grader    the grader's launcher with the memory checker (interpretation only);
  no-check  the grader's launcher with the memory checker switched off, to isolate the checker's cost;
and the wall-clock time of `triton-course check solutions/` (start-up, the sandboxed worker, the compile
check, all puzzles).
Each figure is the median of several runs. Results go to stdout and to bench/results/.
"""
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 9


def _solutions(course, directory):
    """{puzzle id: (kernel, its KernelModules)}: the reference kernels, loaded and executed as the worker does."""
    from grader.pipeline.load import load_submission
    from grader.pipeline.worker import KernelModules
    kernels = {}
    for puzzle in course.puzzles:
        source = load_submission(puzzle.solution, course, [puzzle.id])[puzzle.id].source
        modules = KernelModules(source.modules, directory, f"solution_{puzzle.id}")
        kernels[puzzle.id] = (getattr(modules.load(), source.kernel), modules)
    return kernels


def stock_times():
    """Run in a child with TRITON_INTERPRET=1: seconds per case with the stock interpreter."""
    from grader.pipeline.cases import make_case
    from grader.course import load_course
    course = load_course()
    kernels = _solutions(course, tempfile.mkdtemp())
    times = {}
    for puzzle in course.puzzles:
        for index, spec in enumerate(puzzle.cases):
            def run():
                case = make_case(puzzle, index)
                start = time.perf_counter()
                for launch in case.launches:
                    kernels[puzzle.id][0][launch.grid](*launch.args)
                return time.perf_counter() - start
            times[f"{puzzle.id}/{spec.name}"] = statistics.median(run() for _ in range(REPEATS))
    print(json.dumps(times))


def grader_times():
    """Seconds per case of the worker's own run of it (fresh copies of the tensors, every launch, the memory
    checker), and of the same with the checker's bookkeeping switched off."""
    from grader.course import load_course
    from grader.pipeline import worker
    from grader.pipeline.cases import make_case
    from grader.pipeline.interpret import interpreting
    from grader.pipeline.memcheck import MemoryChecker
    from grader.pipeline.protocol import case_payload

    class Unchecked(MemoryChecker):
        def tag(self, param, handle):
            return handle

        def installed(self):
            return contextlib.nullcontext(self)

    course = load_course()
    kernels = _solutions(course, tempfile.mkdtemp())
    rows = {}
    for puzzle in course.puzzles:
        kernel, modules = kernels[puzzle.id]
        for index, spec in enumerate(puzzle.cases):
            payload = case_payload(puzzle, make_case(puzzle, index))

            def interpretation(checker_class):
                worker.MemoryChecker = checker_class
                start = time.perf_counter()
                run = worker._run(kernel, payload, payload["order"], list(puzzle.params), modules)
                elapsed = time.perf_counter() - start
                worker.MemoryChecker = MemoryChecker
                assert run["error"] is None, f"{puzzle.id}/{spec.name}: {run['error']}"
                return elapsed
            with interpreting([vars(module) for module in modules.loaded.values()]):
                checked = statistics.median(interpretation(MemoryChecker) for _ in range(REPEATS))
                unchecked = statistics.median(interpretation(Unchecked) for _ in range(REPEATS))
            rows[f"{puzzle.id}/{spec.name}"] = {"grader": checked, "no-check": unchecked}
    return rows


def check_wall_clock():
    from check_latency import command_seconds  # one timer of the check command for both benchmarks
    return command_seconds([str(Path(sys.executable).parent / "triton-course"), "check", "solutions/"])


def _row(name, row):
    return (f"| {name} | {1e3 * row['stock']:.1f} | {1e3 * row['grader']:.1f} | {1e3 * row['no-check']:.1f} | "
            f"{100 * (row['grader'] / row['no-check'] - 1):+.0f}% | {row['stock'] / row['grader']:.2f}x |")


def main():
    if sys.argv[1:] == ["--stock"]:
        return stock_times()
    env = dict(os.environ, TRITON_INTERPRET="1")
    stock = json.loads(subprocess.run([sys.executable, __file__, "--stock"], env=env, capture_output=True,
                                      text=True, check=True, cwd=ROOT).stdout)
    rows = grader_times()
    wall = check_wall_clock()
    import numpy
    import torch
    import triton
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    lines = [
        "# Interpreter overhead of the grader",
        "",
        f"Machine: {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, torch {torch.__version__}, "
        f"triton {triton.__version__}, numpy {numpy.__version__}.",
        f"Median of {REPEATS} runs per case, in milliseconds. stock: TRITON_INTERPRET=1, no checks. grader: the "
        "grader's launcher with the memory checker. no-check: the same without the checker.",
        "",
    ]
    for name in rows:
        rows[name]["stock"] = stock[name]
    by_puzzle = {}
    for name, row in rows.items():
        total = by_puzzle.setdefault(name.split("/")[0], dict.fromkeys(row, 0.0))
        for key, value in row.items():
            total[key] += value
    by_puzzle["**all cases**"] = {key: sum(t[key] for t in by_puzzle.values()) for key in rows[name]}
    header = ["", "| {} | stock | grader | no-check | checker overhead | speed-up over stock |",
              "|---|---:|---:|---:|---:|---:|"]
    lines += ["## Per puzzle (sum of its cases)"] + [header[0], header[1].format("puzzle"), header[2]]
    lines += [_row(name, row) for name, row in by_puzzle.items()]
    lines += ["", f"`triton-course check solutions/` ({len(rows)} cases of {len(by_puzzle) - 1} puzzles; start-up, "
                  f"the sandboxed worker and the compile check included), wall clock, median of 3: **{wall:.1f} s**.",
              "",
              "## Per case"] + [header[0], header[1].format("case"), header[2]]
    lines += [_row(name, row) for name, row in rows.items()]
    report = "\n".join(lines) + "\n"
    print(report)
    out = ROOT / "bench" / "results" / "interpreter_overhead.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(report)


if __name__ == "__main__":
    main()
