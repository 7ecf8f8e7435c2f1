"""Grading a class per core: the core-seconds `triton-course grade` spends on a class, against commit BASELINE's.

The class of bench/class_grading.py (complete submissions of the assignment vector_add, outer_add,
strided_views, hidden cases on) is graded with --jobs 2 by this checkout and by commit BASELINE (default
f49fe7b, the grader of the issue that asked for 3 times fewer core-seconds: a sandboxed worker started from
nothing for each student), from a git worktree, at SMALL and LARGE students, each run of one right after the
same run of the other, ROUNDS times. Core-seconds are the whole machine's busy time from /proc/stat, so nothing
else should run meanwhile. Reported: core-seconds per run, and the cost of one more student (the slope between
the two class sizes, which leaves out what a run pays once: imports, warm workers, the class page). Results go
to stdout and to bench/results/class_per_core.md.
"""
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import class_grading  # noqa: E402
from suite_cpu import TICKS, busy_idle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BASELINE = os.environ.get("BASELINE", "f49fe7b")
SMALL, LARGE = int(os.environ.get("SMALL", 10)), int(os.environ.get("LARGE", 50))
ROUNDS = int(os.environ.get("ROUNDS", 2))


def busy_core_seconds():
    return busy_idle()[0] / TICKS


def graded(submissions, out, checkout):
    """(wall seconds, busy core-seconds) of grading `submissions` with the grader of `checkout`."""
    command = [sys.executable, "-m", "grader.cli", "grade", str(submissions), "--assignment", "ps1",
               "--hidden-seed", "1", "--jobs", "2", "--out", str(out),
               *[a for pid in class_grading.ASSIGNMENT for a in ("--puzzle", pid)]]
    env = {**os.environ, "PYTHONPATH": str(checkout),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    busy, start = busy_core_seconds(), time.perf_counter()
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{checkout}: grade failed\n{done.stderr[-3000:]}")
    return time.perf_counter() - start, busy_core_seconds() - busy


def main():
    from grader.course import load_course

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        class_grading.STUDENTS = LARGE
        class_grading.make_class(scratch / "large", load_course(), class_grading.ASSIGNMENT, "ps1")
        small = scratch / "small" / "submitted"
        small.mkdir(parents=True)
        for student in sorted((scratch / "large" / "submitted").iterdir())[:SMALL]:
            subprocess.run(["cp", "-r", str(student), str(small)], check=True)
        baseline = scratch / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(baseline), BASELINE],
                       check=True, capture_output=True)
        runs = {}
        try:
            for round_ in range(ROUNDS):
                for size, submissions in ((SMALL, small), (LARGE, scratch / "large" / "submitted")):
                    for name, checkout in ((BASELINE, baseline), ("now", ROOT)):
                        out = scratch / f"{name}-{size}-{round_}.csv"
                        wall, core = graded(submissions, out, checkout)
                        runs.setdefault((name, size), []).append((wall, core))
                        print(f"{name} {size} students: {wall:.1f} s, {core:.1f} core-s", flush=True)
                    grades = [class_grading._grades(scratch / f"{name}-{size}-{round_}.csv")
                              for name in (BASELINE, "now")]
                    assert grades[0] == grades[1], "the two graders disagree"
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)],
                           capture_output=True)

    def median_core(name, size):
        return statistics.median(core for _, core in runs[(name, size)])

    lines = ["# Grading a class, per core", "",
             f"Machine: {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores. `bench/class_per_core.py`: the class of bench/class_grading.py (3 puzzles, "
             f"hidden cases), `triton-course grade --jobs 2`, this checkout against {BASELINE}, each run right after "
             f"the other's, {ROUNDS} rounds; busy core-seconds of the whole machine (/proc/stat); medians.", "",
             "| students | " + BASELINE + " | now | fewer core-seconds |", "|---:|---:|---:|---:|"]
    for size in (SMALL, LARGE):
        old, new = median_core(BASELINE, size), median_core("now", size)
        lines.append(f"| {size} | {old:.1f} | {new:.1f} | {old / new:.2f}x |")
    slopes = {name: (median_core(name, LARGE) - median_core(name, SMALL)) / (LARGE - SMALL)
              for name in (BASELINE, "now")}
    once = {name: median_core(name, SMALL) - SMALL * slopes[name] for name in slopes}
    lines += ["", f"One more student: {slopes[BASELINE]:.2f} core-s with {BASELINE}, {slopes['now']:.2f} now "
                  f"({slopes[BASELINE] / slopes['now']:.2f}x fewer). Paid once a run: {once[BASELINE]:.1f} core-s with "
                  f"{BASELINE}, {once['now']:.1f} now (the warm workers' imports, the class page).", "",
              "Every run: " + "; ".join(f"{name} {size}: " + ", ".join(f"{core:.1f}" for _, core in values)
                                        for (name, size), values in runs.items()) + " core-s."]
    text = "\n".join(lines) + "\n"
    (ROOT / "bench" / "results" / "class_per_core.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
