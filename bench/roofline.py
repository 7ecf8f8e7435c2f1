"""The roofline of a memory-bound kernel: its mix of reads and writes, measured in the same run.

    python bench/roofline.py --out bench/results/roofline-<gpu>    (on a machine with a CUDA GPU)

`triton-course bench` of the reference solutions of every memory-bound puzzle. The timing process measures
this run's copy, read (a sum) and write (a fill) bandwidths; a kernel's roofline is its reads at the read
bandwidth plus its writes (its outputs) at the write bandwidth. The report gives each timing's fraction of
that roofline beside its fraction of the copy bandwidth (what the stage used before), and checks the model on
the copy itself: half reads, half writes, predicted from the read and write bandwidths against measured.
Writes <out>.md and <out>.json.
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="path without suffix of the .md and .json written")
    out = Path(parser.parse_args().out)
    from grader.course import load_course
    from grader.gpu.bench import bench_submission
    course = load_course()
    memory_bound = [p.id for p in course.puzzles if p.benchmark is not None and p.benchmark.bytes is not None]
    results = bench_submission(course, ROOT / "solutions", memory_bound)
    out.with_suffix(".json").write_text(json.dumps(results, indent=2))
    device = results["device"]
    read, write, copy = device["read_bandwidth"], device["write_bandwidth"], device["copy_bandwidth"]
    predicted_copy = 1 / (0.5 / read + 0.5 / write)
    lines = [
        "# The roofline of a memory-bound kernel: its mix of reads and writes",
        "",
        f"`python bench/roofline.py` on an {device['name']} (driver {device['driver']}, CUDA {device['cuda']}, "
        f"torch {device['torch']}, triton {device['triton']}). Measured in the same run: read bandwidth "
        f"{read / 1e12:.2f} TB/s (a sum of 1 GiB), write bandwidth {write / 1e12:.2f} TB/s (a fill of 1 GiB), "
        f"copy bandwidth {copy / 1e12:.2f} TB/s (1 GiB to 1 GiB). The model (reads at the read bandwidth plus "
        f"writes at the write bandwidth) predicts {predicted_copy / 1e12:.2f} TB/s for the copy: "
        f"{100 * predicted_copy / copy:.0f}% of the measured copy.",
        "",
        "| puzzle | sizes | written | time | rate | of the copy bandwidth (before) | of its roofline (now) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for puzzle in results["puzzles"]:
        if puzzle["status"] != "pass":
            lines.append(f"| {puzzle['id']} | | | | | {puzzle['status']}: {puzzle.get('reason', '')} | |")
            continue
        for timing in puzzle["timings"]:
            sizes = ", ".join(f"{k}={v}" for k, v in timing["sizes"].items())
            lines.append(f"| {puzzle['id']} | {sizes} | {100 * timing['written_bytes'] / timing['bytes']:.0f}% | "
                         f"{timing['time_s'] * 1e3:.3f} ms | {timing['gbps']:.0f} GB/s | "
                         f"{100 * timing['bytes'] / timing['time_s'] / copy:.0f}% | {100 * timing['fraction']:.0f}% |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
