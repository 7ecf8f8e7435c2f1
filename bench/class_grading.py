"""Grading a class: `triton-course grade` on this machine and on a Dask cluster, and the projection to 10,000.

A class of STUDENTS complete submissions (the reference solutions in the released notebooks) of an
assignment of the first three puzzles is graded on this machine with 1 and 2 jobs, then on a real Dask
cluster on loopback with 1 and 2 workers (each CSV compared with the local one), then (with NBGRADER=1) by
nbgrader's autograde, then the whole course on this machine. Reported: wall-clock time, time per student,
students per minute, peak memory, the cluster's overhead, and the projection for 10,000 students on 64 and
512 cores. The same class is also graded by the grader of commit BASELINE (default f49fe7b: a sandboxed worker
started from nothing for each student, a thread pool), from a git worktree, each of its runs next to this
checkout's run with as many jobs, so that both see the machine at the same time. Results go to stdout and to
bench/results/class_grading.md.
"""
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
STUDENTS = int(os.environ.get("STUDENTS", 50))
ASSIGNMENT = ["vector_add", "outer_add", "strided_views"]
BASELINE = os.environ.get("BASELINE", "f49fe7b")


def kernel_of(path):
    text = Path(path).read_text()
    return text[text.index("@triton.jit"):]


def run(command, cwd, output=None, pythonpath=None):
    """Wall-clock seconds and peak child RSS (MiB) of a command; its output in `output` if given. `pythonpath`:
    where its `grader` package comes from, instead of this checkout."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    # A wrapper process of its own, so that the peak it reports is this command's alone.
    wrapper = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "if done.returncode: sys.exit(done.stdout[-3000:] + done.stderr[-3000:])\n"
               "print(done.stdout); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", wrapper, *command], cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    if output is not None:
        output.append(result.stdout)
    return time.perf_counter() - start, int(result.stdout.split()[-1]) / 1024


def _grades(csv_path):
    """The points columns of a grades CSV (what both graders write)."""
    return [line.split(",")[:6] for line in Path(csv_path).read_text().splitlines()]


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


def cluster(workers, directory):
    """Start a Dask scheduler and `workers` single-thread workers on loopback; return (address, processes)."""
    dask = str(Path(sys.executable).parent / "dask")
    scheduler_file = directory / f"scheduler{workers}.json"
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", str(scheduler_file)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, cwd=directory)]
    while not scheduler_file.exists():
        time.sleep(0.2)
    address = json.loads(scheduler_file.read_text())["address"]
    quiet = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}  # as the README starts them
    processes += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=directory, env=quiet)
                  for _ in range(workers)]
    from distributed import Client
    with Client(address) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, processes


def main():
    from grader.course import load_course
    from grader.pipeline.sandbox import sandbox_kind
    course = load_course()
    rows, rates, autograde = [], {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        make_class(scratch / "ps1", course, ASSIGNMENT, "ps1")
        grade = [sys.executable, "-m", "grader.cli", "grade", str(scratch / "ps1" / "submitted"), "--assignment",
                 "ps1", "--hidden-seed", "1", *[a for pid in ASSIGNMENT for a in ("--puzzle", pid)]]
        baseline = scratch / "baseline"
        added = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(baseline), BASELINE],
                               capture_output=True, text=True)
        if added.returncode:  # a shallow clone, or no git: the rest is measured all the same
            print(f"no comparison with {BASELINE}: git cannot check it out here ({added.stderr.strip()[-200:]}); "
                  "`git fetch --unshallow` brings the history", file=sys.stderr)
        try:
            for workers in (1, 2):
                out = scratch / f"baseline{workers}.csv"
                if not added.returncode:
                    rates[("baseline", workers)], _ = run(grade + ["--jobs", str(workers), "--out", str(out)],
                                                          baseline, pythonpath=baseline)
                seconds, memory = run(grade + ["--jobs", str(workers), "--out", str(scratch / f"local{workers}.csv")],
                                      ROOT)
                rates[("local", workers)] = seconds
                same = added.returncode or _grades(out) == _grades(scratch / f"local{workers}.csv")
                rows.append((f"triton-course grade, 3 puzzles, this machine, --jobs {workers}"
                             f"{'' if same else f' (GRADES DIFFER from {BASELINE})'}", seconds, memory))
        finally:
            if not added.returncode:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)],
                               capture_output=True)
        for workers in (1, 2):
            address, processes = cluster(workers, scratch)
            try:
                seconds, memory = run(grade + ["--scheduler", address, "--out", str(scratch / f"dask{workers}.csv")],
                                      ROOT)
            finally:
                for process in processes:
                    process.terminate()
                    process.wait()
            rates[("dask", workers)] = seconds
            same = (scratch / f"dask{workers}.csv").read_bytes() == (scratch / "local1.csv").read_bytes()
            rows.append((f"triton-course grade, 3 puzzles, Dask cluster of {workers} worker{'s' * (workers > 1)}"
                         f"{'' if same else ' (CSV DIFFERS from the local run)'}", seconds, None))
        nbgrader = str(Path(sys.executable).parent / "nbgrader")
        shutil.copytree(scratch / "ps1", scratch / "ps1-parallel")  # both start from the submitted class
        plain, memory = run([nbgrader, "autograde", "ps1"], scratch / "ps1")
        rows.append(("nbgrader autograde, 3 puzzles", plain, memory))
        printed = []
        for jobs in (1, 2):
            seconds, memory = run([sys.executable, "-m", "grader.cli", "nbgrader", "autograde", "ps1", "--force",
                                   "--jobs", str(jobs)], scratch / "ps1-parallel", printed)
            phases = re.search(r"kernels graded in (\d+) s, nbgrader's autograde in (\d+) s", printed[-1])
            autograde[jobs] = (seconds, int(phases[1]), int(phases[2]))
            run([nbgrader, "export"], scratch / "ps1-parallel")
            run([nbgrader, "export"], scratch / "ps1")
            same = sorted((scratch / "ps1-parallel" / "grades.csv").read_text().splitlines()) == \
                sorted((scratch / "ps1" / "grades.csv").read_text().splitlines())
            rows.append((f"triton-course nbgrader autograde, 3 puzzles, --jobs {jobs} (kernels {phases[1]} s, "
                         f"nbgrader's bookkeeping {phases[2]} s){'' if same else ' (GRADES DIFFER from nbgrader)'}",
                         seconds, memory))
        make_class(scratch / "all", course, [p.id for p in course.puzzles], "all")
        seconds, memory = run([sys.executable, "-m", "grader.cli", "grade", str(scratch / "all" / "submitted"),
                               "--assignment", "all", "--hidden-seed", "1", "--out", str(scratch / "all.csv")], ROOT)
        rows.append((f"triton-course grade, all {len(course.puzzles)} puzzles, this machine", seconds, memory))
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    per_core = rates[("dask", 1)] / STUDENTS  # seconds of one single-thread worker per student, cluster included
    scaling = rates[("dask", 1)] / rates[("dask", 2)]
    lines = ["# Grading a class", "",
             f"Machine: {cpu}, {os.cpu_count()} cores; sandbox: {sandbox_kind()}. {STUDENTS} complete submissions "
             "(the reference solutions in the released notebooks), hidden cases on. A Dask cluster is a "
             "`dask scheduler` and `dask worker --nthreads 1` processes on loopback, started before the run (not "
             "timed).", "",
             "| run | wall clock | per student | students per minute | peak memory of a process |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {seconds:.0f} s | {seconds / STUDENTS:.2f} s | {60 * STUDENTS / seconds:.0f} | "
              f"{f'{memory:.0f} MiB' if memory else '-'} |" for name, seconds, memory in rows]
    lines += ["", "Peak memory is the largest resident set of any process the command started (the grader, "
                  "nbgrader, or a sandboxed worker); a cluster's workers are not the command's processes.", "",
              "## The cluster's overhead", "",
              f"- 1 worker: {rates[('dask', 1)]:.0f} s on the cluster against {rates[('local', 1)]:.0f} s on this "
              f"machine with --jobs 1 ({100 * (rates[('dask', 1)] / rates[('local', 1)] - 1):+.0f}%).",
              f"- 2 workers: {rates[('dask', 2)]:.0f} s against {rates[('local', 2)]:.0f} s with --jobs 2 "
              f"({100 * (rates[('dask', 2)] / rates[('local', 2)] - 1):+.0f}%); 2 workers grade "
              f"{scaling:.2f} times as fast as 1 on these 2 cores.", "",
              "## 10,000 students", "",
              f"One single-thread worker grades a student of this assignment in {per_core:.2f} s (the cluster run "
              "with 1 worker, start-up of the command included). Assumptions: the students are independent tasks "
              "(they are); each core runs one single-thread worker with its warm sandbox and at least 8 GiB of "
              "memory per worker (the sandbox's limit); the scheduler hands out tasks faster than they finish "
              "(Dask's scheduler handles thousands of tasks a second; a task here takes about a second); the "
              "client reads 10,000 submissions (small files) in well under a minute; submissions like these "
              "(complete ones: a wrong kernel that stops early is faster, one that runs into the timeout slower).", ""]
    for cores in (64, 512):
        minutes = 10_000 * per_core / cores / 60
        lines.append(f"- {cores} cores: 10,000 x {per_core:.2f} s / {cores} = {minutes:.1f} minutes "
                     f"({10_000 / minutes:.0f} students per minute).")
    if ("baseline", 1) in rates:
        lines += ["", f"## Against the grader of {BASELINE}", "",
                  f"The same class graded by the grader of commit {BASELINE} (a sandboxed worker started from "
                  "nothing for each student, a thread pool), each run right before this checkout's with as many "
                  "jobs:", "", f"| --jobs | {BASELINE} | now | faster |", "|---:|---:|---:|---:|"]
        lines += [f"| {jobs} | {rates[('baseline', jobs)]:.0f} s | {rates[('local', jobs)]:.0f} s | "
                  f"{rates[('baseline', jobs)] / rates[('local', jobs)]:.2f}x |" for jobs in (1, 2)]
    one, two = autograde[1][2] / STUDENTS, autograde[2][2] / STUDENTS
    lines += ["", "## nbgrader", "",
              f"`nbgrader autograde` of the same class took {plain:.0f} s here; `triton-course nbgrader autograde` "
              f"gives the same grades in {autograde[1][0]:.0f} s with --jobs 1 and {autograde[2][0]:.0f} s with "
              "--jobs 2. Its kernels are graded on Dask (this machine's cores here, or a cluster with --scheduler), "
              "at the rate above; the rest is nbgrader's own bookkeeping, which runs in --jobs processes on the "
              f"machine that holds the gradebook: {one:.2f} s a student in one process, {two:.2f} s with two "
              f"(measured up to two; one SQLite gradebook takes one writer at a time). For 10,000 students that "
              f"is {10_000 * one / 60:.0f} minutes in one process and {10_000 * two / 60:.0f} minutes in two, "
              "beside the kernels' minutes on the cluster.", ""]
    report = "\n".join(lines) + "\n"
    print(report)
    out = ROOT / "bench" / "results" / "class_grading.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(report)


if __name__ == "__main__":
    main()
