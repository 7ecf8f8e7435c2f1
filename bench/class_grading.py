"""Grading a class: `triton-course grade` and nbgrader's autograde on the same synthetic class.

A class of STUDENTS complete submissions (the reference solutions in the released notebooks) of an
assignment of the first three puzzles is graded by both tools, then by `triton-course grade` alone with the
whole course (all puzzles). Reported: wall-clock time, time per student, and the peak memory (maximum
resident set) of the grader's own process and of the largest child process. Results go to stdout and to
bench/results/class_grading.md.
"""
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
STUDENTS = int(os.environ.get("STUDENTS", 50))
ASSIGNMENT = ["vector_add", "outer_add", "strided_views"]


def kernel_of(path):
    text = Path(path).read_text()
    return text[text.index("@triton.jit"):]


def run(command, cwd):
    """Wall-clock seconds and peak child RSS (MiB) of a command."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    # A wrapper process of its own, so that the peak it reports is this command's alone.
    wrapper = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "if done.returncode: sys.exit(done.stdout[-3000:] + done.stderr[-3000:])\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", wrapper, *command], cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    return time.perf_counter() - start, int(result.stdout.split()[-1]) / 1024


def make_class(course_dir, course, puzzle_ids, assignment):
    from grader.classroom.nbgrader import init_course
    init_course(course_dir, course, {assignment: puzzle_ids}, seed=1)
    run([str(Path(sys.executable).parent / "nbgrader"), "generate_assignment", assignment], course_dir)
    for student in range(STUDENTS):
        target = course_dir / "submitted" / f"student{student:03d}" / assignment
        target.mkdir(parents=True)
        for puzzle_id in puzzle_ids:
            puzzle = course.puzzle(puzzle_id)
            notebook = nbformat.read(course_dir / "release" / assignment / puzzle.notebook.name, as_version=4)
            for cell in notebook.cells:
                if cell.metadata.get("nbgrader", {}).get("grade_id") == f"kernel_{puzzle_id}":
                    cell.source = kernel_of(puzzle.solution)
            nbformat.write(notebook, target / puzzle.notebook.name)


def main():
    from grader.course import load_course
    from grader.pipeline.sandbox import sandbox_kind
    course = load_course()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        make_class(scratch / "ps1", course, ASSIGNMENT, "ps1")
        grade = [sys.executable, "-m", "grader.cli", "grade", str(scratch / "ps1" / "submitted"), "--assignment",
                 "ps1", "--hidden-seed", "1", *[a for pid in ASSIGNMENT for a in ("--puzzle", pid)]]
        seconds, memory = run(grade + ["--out", str(scratch / "ours.csv")], ROOT)
        rows.append(("triton-course grade, 3 puzzles", seconds, memory))
        seconds, memory = run([str(Path(sys.executable).parent / "nbgrader"), "autograde", "ps1"], scratch / "ps1")
        rows.append(("nbgrader autograde, 3 puzzles", seconds, memory))
        make_class(scratch / "all", course, [p.id for p in course.puzzles], "all")
        seconds, memory = run([sys.executable, "-m", "grader.cli", "grade", str(scratch / "all" / "submitted"),
                               "--assignment", "all", "--hidden-seed", "1", "--out", str(scratch / "all.csv")], ROOT)
        rows.append((f"triton-course grade, all {len(course.puzzles)} puzzles", seconds, memory))
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    lines = ["# Grading a class", "",
             f"Machine: {cpu}, {os.cpu_count()} cores; sandbox: {sandbox_kind()}. {STUDENTS} complete submissions "
             "(the reference solutions in the released notebooks), hidden cases on.", "",
             "| run | wall clock | per student | peak memory of a process |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {seconds:.0f} s | {seconds / STUDENTS:.1f} s | {memory:.0f} MiB |"
              for name, seconds, memory in rows]
    lines += ["", "Peak memory is the largest resident set of any process the command started (the grader, "
                  "nbgrader, or a sandboxed worker)."]
    report = "\n".join(lines) + "\n"
    print(report)
    out = ROOT / "bench" / "results" / "class_grading.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(report)


if __name__ == "__main__":
    main()
