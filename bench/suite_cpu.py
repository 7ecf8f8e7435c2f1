"""Where the test suite's CPU goes: runs `pytest -n N --dist loadfile` (as `make test` does) and samples every
process's CPU time from /proc twice a second, summed by the kind of process its command line names.

    .venv/bin/python bench/suite_cpu.py [--workers N] [--out FILE.json] [-- PYTEST ARGS...]

Prints the wall clock, the machine's busy and idle core-seconds over the run (from /proc/stat), and the
core-seconds of each kind of process. A process that ends between two samples loses at most its last half
second, so short-lived ones (ptxas) are undercounted. Processes forked from a warm worker keep its command
line: the sandboxed grading workers are counted with their fork servers.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
# (what the command line contains, the kind it is counted as), first match wins.
KINDS = (("grader.pipeline.forkserver", "sandboxed grading workers and their fork servers"),
         ("grader.pipeline.worker", "sandboxed grading workers started cold"),
         ("grader.gpu", "GPU stage workers"),
         ("ipykernel", "Jupyter kernels (notebook tests, nbgrader's autograde)"),
         ("nbgrader", "nbgrader commands"),
         ("grader.cli", "triton-course commands"),
         ("jupyter", "Jupyter servers"),
         ("chrom", "chromium"),
         ("dask", "Dask scheduler and workers"),
         ("ptxas", "ptxas"),
         ("against_pytorch", "tests/alternatives/against_pytorch.py"),
         ("exec(eval(sys.stdin.readline()))", "pytest-xdist workers (the tests' own process)"),
         ("pytest", "pytest"))


def kind(pid):
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    return next((name for key, name in KINDS if key in command), "other: " + command[:60] if command else None)


def cpu_ticks():
    """{(pid, start time): user + system ticks} of every process now."""
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[(pid, fields[19])] = int(fields[11]) + int(fields[12])
    return found


def busy_idle():
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(values) - values[3] - values[4], values[3] + values[4]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="auto")
    parser.add_argument("--out", type=Path)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    seen = cpu_ticks()  # what ran before the suite is not the suite's
    kinds = {}
    totals = collections.Counter()
    busy0, idle0 = busy_idle()
    started = time.monotonic()
    suite = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-n", args.workers, "--dist", "loadfile",
                              *args.pytest_args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    output = []
    reader = threading.Thread(target=lambda: output.extend(suite.stdout), daemon=True)
    reader.start()
    while suite.poll() is None:
        for key, ticks in cpu_ticks().items():
            if key not in kinds:
                kinds[key] = kind(key[0]) if key not in seen else None
            if kinds[key]:
                totals[kinds[key]] += ticks - seen.get(key, 0)
            seen[key] = ticks
        time.sleep(0.5)
    reader.join()
    busy1, idle1 = busy_idle()
    result = {"wall_s": round(time.monotonic() - started), "summary": output[-1].strip() if output else "",
              "busy_core_s": round((busy1 - busy0) / TICKS), "idle_core_s": round((idle1 - idle0) / TICKS),
              "core_s_by_process": {name: round(ticks / TICKS) for name, ticks in totals.most_common()
                                    if ticks >= TICKS}}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return suite.returncode


if __name__ == "__main__":
    sys.exit(main())
