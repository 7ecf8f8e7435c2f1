"""How good is the CPU's estimate of a kernel's speed? Predicted (the check's performance stage) against measured
(the GPU stage), on the reference solutions, the fair-grading alternatives and deliberately slow variants.

  python bench/performance_model.py measure OUT.json [FIRST]  on a GPU machine: GPU constants, then `bench` on every
                                                        kernel of the corpus (grouped into folders of one kernel
                                                        per puzzle, so one GPU-stage run times ten puzzles)
  python bench/performance_model.py measure-held-out OUT.json [FIRST]  the same for the held-out kernels (below),
                                                        without the constants
  python bench/performance_model.py constants           on a GPU machine: what performance.py's GPU table needs
  python bench/performance_model.py predict OUT.json [GPU]  anywhere: the check's estimate for GPU (H100, H200) of
                                                        each measured kernel, with the configuration the GPU
                                                        stage chose, then the table and its totals in
                                                        bench/results/performance-model-<gpu>.md
  python bench/performance_model.py predict-held-out OUT.json [GPU]  the same for a measurement of the held-out
                                                        kernels, into performance-model-<gpu>-held-out.md
  python bench/performance_model.py table OUT.json [GPU]  the table again from the last predictions
  python bench/performance_model.py repeat A.json B.json  how two measurements of the corpus agree, per puzzle

The corpus: solutions/, bench/variants/<puzzle>/*.py (slow in one named way each) and the first ALTERNATIVES of
tests/alternatives/<puzzle>/. The model's constants and rules were chosen on that corpus; the held-out kernels
are the rest of tests/alternatives/<puzzle>/ (correct kernels in other people's styles, never measured while the
model was made), measured with the reference solutions beside them, which tie the two measurements together and
give each puzzle's ranking a kernel of known speed. Targets (issue 13): memory-bound puzzles within 25% on the median and a Spearman
rank correlation >= 0.9 of variants by time; matmul and attention >= 0.8.
"""
import itertools
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ALTERNATIVES = 4
MEASURED_APART = 0.10  # a pair closer than this is not counted as ordered either way
COMPUTE_BOUND = ("matmul", "matmul_epilogue", "attention", "causal_attention")


def corpus(course, held_out=False):
    """{puzzle id: [kernel files]} of every benchmarked puzzle: the corpus the model was made on, or the held-out
    kernels after the puzzle's solution."""
    files = {}
    for puzzle in course.puzzles:
        if puzzle.benchmark is None:
            continue
        alternatives = sorted((ROOT / "tests" / "alternatives" / puzzle.id).glob("*.py"))
        found = [ROOT / puzzle.solution]
        if held_out:
            found += alternatives[ALTERNATIVES:]
        else:
            found += sorted((ROOT / "bench" / "variants" / puzzle.id).glob("*.py")) + alternatives[:ALTERNATIVES]
        files[puzzle.id] = found
    return files


def gpu_constants():
    """What performance.py's GPU table needs beyond the GPU stage's own measurements, measured here: the L2's
    read bandwidth, a round of loads' latency in a loop, what a program costs beyond its loads, and what one
    reduction of a block costs when each iteration of a loop reduces it (by the program's warps)."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def sum_rotating_chunks(x_ptr, out_ptr, chunk, rounds, programs, BLOCK: tl.constexpr):
        # Each round a program reads another program's chunk, bypassing its SM's L1 (.cg): the L2 serves it.
        total = tl.zeros([BLOCK], tl.float32)
        for r in range(rounds):
            start = ((tl.program_id(0) + r * 7) % programs) * chunk
            for offset in range(0, chunk, BLOCK):
                total += tl.load(x_ptr + start + offset + tl.arange(0, BLOCK), cache_modifier=".cg")
        tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), total)

    @triton.jit
    def strided_rounds(x_ptr, out_ptr, rounds, stride, BLOCK: tl.constexpr):
        # One round trip per iteration (no software pipelining with num_stages=1), each to a new part of DRAM.
        total = tl.zeros([BLOCK], tl.float32)
        for r in range(rounds):
            total += tl.load(x_ptr + tl.program_id(0) * BLOCK + r * stride + tl.arange(0, BLOCK))
        tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), total)

    @triton.jit
    def one_store(out_ptr, BLOCK: tl.constexpr):
        tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))

    @triton.jit
    def fp32_matmul(a_ptr, b_ptr, c_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        columns = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for k in range(0, n, BLOCK_K):
            a = tl.load(a_ptr + rows[:, None] * n + (k + ks)[None, :])
            b = tl.load(b_ptr + (k + ks)[:, None] * n + columns[None, :])
            acc = tl.dot(a, b, acc, input_precision="ieee")
        tl.store(c_ptr + rows[:, None] * n + columns[None, :], acc)

    @triton.jit
    def chained_reductions(out_ptr, rounds, BLOCK: tl.constexpr):
        # Each iteration needs the last one's maximum: the reductions cannot overlap within a program.
        x = tl.arange(0, BLOCK).to(tl.float32)
        for r in range(rounds):
            x = x - tl.max(x, 0) * 0.5
        tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), x)

    def seconds(fn, repeats=10):
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / repeats

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    programs, chunk, rounds = sms * 16, 4096, 32  # 34 MiB of float32, read 32 times from the L2
    x = torch.randn(programs * chunk, device="cuda")
    out = torch.empty(2 ** 25, device="cuda")
    l2 = programs * chunk * 4 * rounds / seconds(
        lambda: sum_rotating_chunks[(programs,)](x, out, chunk, rounds, programs, BLOCK=1024, num_warps=4))
    resident = sms * 32  # one-warp programs: 32 fit on an SM
    big = torch.randn(2 ** 28, device="cuda")  # 1 GiB: every round reads fresh DRAM
    steps = 256
    # Every SM full of one-warp programs, each loading 128 bytes a round: what a round of a loop costs at full
    # occupancy (performance.py's round_s).
    latency = seconds(lambda: strided_rounds[(resident,)](big, out, steps, resident * 32, BLOCK=32, num_warps=1,
                                                          num_stages=1)) / steps
    many = 2 ** 20
    overhead = seconds(lambda: one_store[(many,)](out, BLOCK=32, num_warps=1)) * resident / many
    # What one more program costs an SM, by its warps: a program's start and end, not its work (one 128-byte store).
    per_program = {}
    for warps in (1, 4, 16):
        count = 2 ** 20
        per_program[warps] = seconds(lambda: one_store[(count,)](out, BLOCK=32, num_warps=warps)) * sms / count
    # A float32 tl.dot in IEEE precision runs on the CUDA cores, well below their peak FMA rate.
    n = 4096
    a, b, c = (torch.randn(n, n, device="cuda") for _ in range(3))
    fp32_dot = 2 * n ** 3 / seconds(lambda: fp32_matmul[(n // 64, n // 64)](a, b, c, n, BLOCK_M=64, BLOCK_N=64,
                                                                                BLOCK_K=32, num_warps=4), repeats=3)
    # One reduction per iteration, every SM full of programs (64 warps an SM), for a block of one element per
    # thread and of 8: the difference between 2048 and 1024 iterations, per iteration (performance.py's cost of a
    # reduction in a loop, by the program's warps; across warps it goes through shared memory with barriers).
    reduction_s = {}
    for warps in (1, 4, 16):
        for per_thread in (1, 8):
            block, grid = 32 * warps * per_thread, sms * 64 // warps
            timed = {rounds: seconds(lambda: chained_reductions[(grid,)](out, rounds, BLOCK=block, num_warps=warps),
                                     repeats=5) for rounds in (1024, 2048)}
            reduction_s[f"{warps} warps, {block} elements"] = (timed[2048] - timed[1024]) / 1024
    return {"l2_read_bandwidth": l2, "round_latency_s": latency, "program_overhead_s": overhead,
            "program_s_by_warps": per_program, "fp32_ieee_dot_flops": fp32_dot, "reduction_s_by_block": reduction_s,
            "device": torch.cuda.get_device_name()}


def measure(out_path, first_folder=0, held_out=False):
    from grader.course import load_course
    from grader.gpu.bench import bench_submission

    course = load_course()
    files = corpus(course, held_out)
    import torch

    results = {"device": torch.cuda.get_device_name(), "constants": None if held_out else gpu_constants(),
               "kernels": []}
    print(json.dumps(results["constants"]), flush=True)
    Path(out_path).write_text(json.dumps(results, indent=1))
    for index in range(first_folder, max(len(found) for found in files.values())):
        with tempfile.TemporaryDirectory() as folder:
            chosen = {pid: found[index] for pid, found in files.items() if index < len(found)}
            for pid, path in chosen.items():
                shutil.copy(path, Path(folder) / f"{pid}.py")
            started = time.time()
            for result in bench_submission(course, folder, list(chosen), student=f"corpus{index}")["puzzles"]:
                timing = (result.get("timings") or [None])[0]
                results["kernels"].append({"puzzle": result["id"], "file": str(chosen[result["id"]].relative_to(ROOT)),
                                           "status": result["status"], "reason": result.get("reason"),
                                           "config": timing and timing["config"], "time_s": timing and timing["time_s"]})
            print(f"folder {index}: {len(chosen)} kernels in {time.time() - started:.0f} s", flush=True)
            Path(out_path).write_text(json.dumps(results, indent=1))


def predict(measured_path, gpu):
    from dataclasses import replace

    from grader.course import load_course
    from grader.pipeline.grade import grade_submission
    from grader.settings import DEFAULT

    course = load_course()
    measured = json.loads(Path(measured_path).read_text())
    rows = []
    for kernel in measured["kernels"]:
        if kernel["status"] != "pass" or not kernel["time_s"]:
            continue
        report = grade_submission(course, ROOT / kernel["file"], [kernel["puzzle"]],
                                  settings=replace(DEFAULT, estimate_gpu=gpu),
                                  performance={kernel["puzzle"]: kernel["config"]})
        result = report.puzzles[0]
        performance = result.performance or {}
        rows.append({**kernel, "predicted_s": performance.get("predicted_s"), "bound": performance.get("bound"),
                     "advice": performance.get("advice"), "error": performance.get("error") or
                     (None if performance else f"the check says {result.status}")})
        print(kernel["file"], kernel["time_s"], rows[-1]["predicted_s"], flush=True)
    return rows


def spearman(xs, ys):
    """Spearman's rank correlation; tied values share their average rank (kernels predicted alike are not
    ranked by the order they were listed in)."""
    def ranks(values):
        order = sorted(range(len(values)), key=values.__getitem__)
        result = [0.0] * len(values)
        start = 0
        while start < len(order):
            end = start
            while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
                end += 1
            for i in order[start:end + 1]:
                result[i] = (start + end) / 2
            start = end + 1
        return result
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else float("nan")


def misordered(rows, apart):
    """(pairs the estimate does not order as measured, pairs measured more than `apart` apart): which of the
    pairs the GPU tells apart the estimate gets wrong, where a Spearman under 1 is also lowered by kernels measured
    within a few percent of each other (as good as tied) that the estimate predicts alike."""
    wrong = total = 0
    for a, b in itertools.combinations(rows, 2):
        measured = a["time_s"] / b["time_s"]
        if max(measured, 1 / measured) <= 1 + apart:
            continue
        total += 1
        predicted = a["predicted_s"] / b["predicted_s"]
        wrong += predicted == 1 or (measured > 1) != (predicted > 1)
    return wrong, total


def repeat(first_path, second_path):
    """Per puzzle: how far apart two measurements put each kernel (median, largest) and how alike they rank them."""
    first, second = ({k["file"]: k for k in json.loads(Path(p).read_text())["kernels"] if k["time_s"]}
                     for p in (first_path, second_path))
    lines = ["| puzzle | kernels | apart, median | apart, most | Spearman between the runs |", "|---|---:|---:|---:|---:|"]
    for puzzle in dict.fromkeys(k["puzzle"] for k in first.values()):
        both = [(k["time_s"], second[f]["time_s"]) for f, k in first.items() if k["puzzle"] == puzzle and f in second]
        apart = sorted(abs(a / b - 1) for a, b in both)
        lines.append(f"| {puzzle} | {len(both)} | {statistics.median(apart):.1%} | {apart[-1]:.1%} | "
                     f"{spearman(*zip(*both)):.2f} |")
    return "\n".join(lines)


def table(measured_path, rows, triton_version, gpu, held_out=False):
    measured = json.loads(Path(measured_path).read_text())
    runs = json.loads((ROOT / "bench" / "results" / f"gpu-constants-{gpu.lower()}.json").read_text())["runs"]
    constants = {"device": runs[0]["device"]}
    CONSTANTS = "; ".join(
        f"{label} {', '.join(format(run[key] * scale, '.2f') for run in runs)} {unit}" for label, key, scale, unit in (
            ("L2 read bandwidth", "l2_read_bandwidth", 1e-12, "TB/s"), ("a round of loads", "round_latency_s", 1e6, "us"),
            ("a wave of programs", "program_overhead_s", 1e6, "us")))
    newest = [run for run in runs if "program_s_by_warps" in run]
    CONSTANTS += "; one program (1, 4, 16 warps) " + ", ".join(
        "/".join(format(v * 1e6, ".3f") for v in run["program_s_by_warps"].values()) for run in newest) + " us"
    CONSTANTS += "; a float32 tl.dot in IEEE precision " + ", ".join(
        format(run["fp32_ieee_dot_flops"] * 1e-12, ".1f") for run in newest) + " TFLOP/s"
    reducing = [run["reduction_s_by_block"] for run in runs if "reduction_s_by_block" in run]
    CONSTANTS += "; a reduction in a loop, every SM full of programs (" + "; ".join(reducing[0]) + "), per iteration " + \
        ", ".join("/".join(format(v * 1e6, ".2f") for v in run.values()) for run in reducing) + \
        " us (the one-warp programs fill two waves)"
    name = f"performance-model-{gpu.lower()}" + ("-held-out" if held_out else "")
    lines = ["# Held-out kernels: predicted on the CPU against measured on the GPU" if held_out else
             "# Predicted on the CPU against measured on the GPU", ""]
    if held_out:
        lines += ["The fair-grading alternatives the model was not made on (bench/performance_model.py's docstring "
                  "says which), each puzzle's reference solution first: no constant or rule of the estimate was "
                  "chosen by looking at these kernels' measured times, which were taken after the model was "
                  "made. The totals below are the model's accuracy out of sample.", ""]
    lines += [f"Measured: `triton-course bench` on an {measured.get('device') or constants['device']} "
              f"(bench/performance_model.py {'measure-held-out' if held_out else 'measure'}); "
              f"GPU constants measured by `bench/performance_model.py constants` on the same kind of machine, {len(runs)} runs "
              f"(gpu-constants-{gpu.lower()}.json; performance.py's table): {CONSTANTS}. Predicted: the check's "
              f"performance stage for an {gpu}, on this machine, with Triton {triton_version}, with the configuration "
              f"the GPU stage chose (the fastest of the kernel's). Raw data: {name}.json.", "",
              "| puzzle | kernel | configuration | measured | predicted | error | bound |", "|---|---|---|---:|---:|---:|---|"]
    totals = []
    for puzzle in dict.fromkeys(r["puzzle"] for r in rows):
        mine = [r for r in rows if r["puzzle"] == puzzle and r["predicted_s"]]
        for r in mine:
            error = r["predicted_s"] / r["time_s"] - 1
            config = r["config"] or {}
            shown = ", ".join(f"{k}={v}" for k, v in config.get("kwargs", {}).items())
            shown += f", {config.get('num_warps', '-')} warps"
            lines.append(f"| {puzzle} | {Path(r['file']).stem} | {shown} | {r['time_s'] * 1e6:.0f} us | "
                         f"{r['predicted_s'] * 1e6:.0f} us | {error:+.0%} | {r['bound']} |")
        if len(mine) >= 2:
            errors = [abs(r["predicted_s"] / r["time_s"] - 1) for r in mine]
            totals.append((puzzle, len(mine), statistics.median(errors),
                           spearman([r["time_s"] for r in mine], [r["predicted_s"] for r in mine]),
                           misordered(mine, MEASURED_APART)))
    lines += ["", "## Totals", "",
              f"Misordered: of the pairs of kernels measured more than {MEASURED_APART:.0%} apart, those the estimate "
              "does not order as the GPU does (the other way round, or predicted alike). Pairs measured closer are "
              "left out of that count (not of the Spearman, where kernels measured a few percent apart and "
              "predicted alike count against the estimate).", "",
              "| puzzle | kernels | median error | Spearman | misordered | target |", "|---|---:|---:|---:|---:|---|"]
    for puzzle, count, error, rho, (wrong, apart) in totals:
        target = "Spearman >= 0.8" if puzzle in COMPUTE_BOUND else "median error <= 25%, Spearman >= 0.9"
        lines.append(f"| {puzzle} | {count} | {error:.0%} | {rho:.2f} | {wrong} of {apart} | {target} |")
    memory = [r for r in rows if r["puzzle"] not in COMPUTE_BOUND and r["predicted_s"]]
    if memory:
        lines += ["", f"Memory-bound puzzles together: median error "
                      f"{statistics.median(abs(r['predicted_s'] / r['time_s'] - 1) for r in memory):.0%}, Spearman "
                      f"{spearman([r['time_s'] for r in memory], [r['predicted_s'] for r in memory]):.2f} "
                      f"over {len(memory)} kernels."]
    lines += ["", "Where and why the estimate misses, kernel by kernel (both GPUs): performance-model-h100-misses.md."]
    skipped = [r for r in rows if not r["predicted_s"]]
    lines += [f"", "Not predicted: " + ("; ".join(f"{r['file']}: {r['error']}" for r in skipped) or "none") + "."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    mode, path = sys.argv[1], (sys.argv[2:] or [None])[0]
    gpu = (sys.argv[3:] or ["H100"])[0]  # predict and table: the GPU of the measurements
    results = ROOT / "bench" / "results"
    if mode == "constants":
        print(json.dumps(gpu_constants()))
    elif mode in ("measure", "measure-held-out"):  # a third argument: the first folder to measure (a run cut short
        # goes on from there)
        measure(path, int(sys.argv[3]) if len(sys.argv) > 3 else 0, held_out=mode == "measure-held-out")
    elif mode == "repeat":
        print(repeat(path, sys.argv[3]))
    elif mode in ("table", "table-held-out", "predict", "predict-held-out"):
        # predict: the estimate of every measured kernel; table: the table again from the last predictions; both
        # into bench/results/
        held_out = mode.endswith("held-out")
        name = f"performance-model-{gpu.lower()}" + ("-held-out" if held_out else "")
        if mode.startswith("table"):
            last = json.loads((results / f"{name}.json").read_text())
            rows, version = last["predicted"], last["triton"]
        else:
            import triton
            rows, version = predict(path, gpu), triton.__version__
            (results / f"{name}.json").write_text(json.dumps(
                {"measured": json.loads(Path(path).read_text()), "triton": version, "predicted": rows}, indent=1))
        (results / f"{name}.md").write_text(table(path, rows, version, gpu, held_out))
        print((results / f"{name}.md").read_text())
