"""CPU/GPU parity: the verdict of the CPU grader and of the GPU stage's verification, side by side.

    python bench/parity.py --out bench/results/parity-<gpu>.md    (on a machine with a CUDA GPU)

Every reference solution, every alternative (tests/alternatives/) and every catalogued bug (tests/bugs/) is
graded twice, on the puzzle's public cases: by the CPU grader (Triton's interpreter, the memory checker, the
compile check), and by the GPU stage (`bench --verify-only`: compiled for this GPU in the compile sandbox,
run on every case by the timing process, compared with the reference by the grader). Both use float32
`tl.dot` as IEEE float32 (the puzzles' precision contract). The report counts the same verdicts, and lists
every difference with the CPU diagnostic that explains it: a bug the CPU grader sees and the GPU run may not
show (a load past the end that reads whatever is there, masked lanes that happen to hold 0, a race the
hardware happens to order, loads beyond the budget, which the GPU does not count) is the CPU stage being
stricter; a kernel that passes on the CPU and fails on the GPU is what this run looks for.
"""
import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Diagnostics the CPU grader gives for behaviour a GPU run may not show, with the reason.
CPU_ONLY = {
    "out_of_bounds": "a load or store outside the tensors: the GPU reads or writes whatever is there",
    "nonfinite": "masked lanes loaded without other= are NaN in the grader, whatever the GPU's memory holds",
    "race": "two programs store one element: the GPU's order decides which value stays",
    "order_dependent": "programs depend on an order the GPU may happen to follow",
    "excess_loads": "the load budget is counted by the memory checker only",
    "unwritten_output": "an element no program stores: the GPU's output may hold a right value by chance",
}


def files():
    """(label, puzzle id, path) of every solution, alternative and bug."""
    from grader.course import load_course
    course = load_course()
    found = [("solution", p.id, p.solution) for p in course.puzzles]
    found += [("alternative", p.parent.name, p) for p in sorted((ROOT / "tests" / "alternatives").glob("*/*"))
              if p.suffix in (".py", ".ipynb") and p.parent.name in {q.id for q in course.puzzles}]
    found += [("bug", p.parent.name, p) for p in sorted((ROOT / "tests" / "bugs").glob("*/*.py"))]
    return course, found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the markdown report; a .json beside it holds every verdict")
    parser.add_argument("--puzzles", nargs="+", metavar="ID", help="only these puzzles (default: every puzzle)")
    args = parser.parse_args()
    import torch

    from grader.gpu.bench import run_on_gpu
    from grader.pipeline.grade import grade_sources
    from grader.pipeline.load import load_submission

    course, found = files()
    if args.puzzles:
        unknown = sorted(set(args.puzzles) - {puzzle.id for puzzle in course.puzzles})
        if unknown:
            parser.error(f"no puzzle {', '.join(unknown)} in course.yml")
        found = [entry for entry in found if entry[1] in args.puzzles]
    entries, loaded_status = {}, {}
    for label, puzzle_id, path in found:
        key = f"{label}:{path.relative_to(ROOT)}"
        item = load_submission(path, course, [puzzle_id])[puzzle_id]
        if item.status == "found":
            entries[key] = (course.puzzle(puzzle_id), item.source)
        else:
            loaded_status[key] = (item.status, [d.kind for d in item.diagnostics])
    workers = os.cpu_count() or 1
    started = time.monotonic()
    cpu = grade_sources(course, {k: s for k, (_, s) in entries.items()}, puzzles={k: p for k, (p, _) in entries.items()},
                        workers=workers)
    cpu_seconds = time.monotonic() - started
    device = torch.cuda.get_device_name(0)
    gpu, gpu_seconds = {}, 0.0
    # One puzzle at a time, the report rewritten after each: a run cut short still reports what it verified.
    for puzzle in course.puzzles:
        batch = {key: entry for key, entry in entries.items() if entry[0].id == puzzle.id}
        if not batch:
            continue
        started = time.monotonic()
        verified, _ = run_on_gpu(course, batch, timed=False, workers=workers)
        gpu_seconds += time.monotonic() - started
        gpu.update(verified)
        write_report(Path(args.out), rows(found, loaded_status, cpu, gpu), device, cpu_seconds, gpu_seconds)


def rows(found, loaded_status, cpu, gpu):
    """One row a file with both verdicts; files of puzzles not verified on the GPU yet are left out."""
    table = []
    for label, puzzle_id, path in found:
        key = f"{label}:{path.relative_to(ROOT)}"
        if key in loaded_status:
            status, kinds = loaded_status[key]
            table.append({"file": key, "puzzle": puzzle_id, "cpu": status, "cpu_kinds": kinds, "gpu": status,
                          "gpu_reason": "not loaded"})
        elif key in gpu:
            result = cpu[key]
            table.append({"file": key, "puzzle": puzzle_id, "cpu": result.status, "cpu_kinds": sorted(result.kinds),
                          "gpu": gpu[key]["status"], "gpu_reason": gpu[key].get("reason", "")[:400]})
    return table


def agreement(row):
    """'same', 'cpu stricter: <why>', or 'DIFFERENT' for a row."""
    cpu_pass, gpu_pass = row["cpu"] == "pass", row["gpu"] == "pass"
    if cpu_pass == gpu_pass:
        return "same"
    if gpu_pass and any(kind in CPU_ONLY for kind in row["cpu_kinds"]):
        kind = next(kind for kind in row["cpu_kinds"] if kind in CPU_ONLY)
        return f"CPU stricter ({kind}: {CPU_ONLY[kind]})"
    return "DIFFERENT"


def write_report(out, rows, device, cpu_seconds, gpu_seconds):
    import torch
    import triton
    for row in rows:
        row["agreement"] = agreement(row)
    out.with_suffix(".json").write_text(json.dumps({"device": device, "rows": rows}, indent=2))
    groups = {}
    for row in rows:
        label = row["file"].split(":")[0]
        verdict = "same" if row["agreement"] == "same" else "CPU stricter" if row["agreement"].startswith("CPU") \
            else "different"
        groups.setdefault(label, {"same": 0, "CPU stricter": 0, "different": 0})[verdict] += 1
    lines = [f"# CPU/GPU parity on {device}", "",
             f"`python bench/parity.py` on {time.strftime('%Y-%m-%d')}: torch {torch.__version__}, triton "
             f"{triton.__version__}. Each file graded on its puzzle's public cases by the CPU grader "
             f"({cpu_seconds:.0f} s) and verified on the GPU by the GPU stage ({gpu_seconds:.0f} s).", "",
             "| files | same verdict | CPU stricter | different |", "|---|---:|---:|---:|"]
    for label, counts in groups.items():
        lines.append(f"| {label}s | {counts['same']} | {counts['CPU stricter']} | {counts['different']} |")
    others = [row for row in rows if row["agreement"] != "same"]
    if others:
        lines += ["", "| file | CPU | GPU | why |", "|---|---|---|---|"]
        for row in others:
            why = row["agreement"] if row["agreement"] != "DIFFERENT" else re.sub(r"\s+", " ", row["gpu_reason"])
            lines.append(f"| {row['file']} | {row['cpu']} ({', '.join(row['cpu_kinds'])}) | {row['gpu']} | "
                         f"{why.replace('|', '/')} |")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
