"""The GPU stage's timing process: verify compiled kernels on the GPU, then time them against PyTorch.

`python -m grader.gpu.timing_worker REQUEST RESULTS`, started (and restarted after a crash) by
sandbox.run_worker, receives compiled kernels as data (compiled.py), never the submission's code: no Python of
the submission runs in this process, so nothing can patch the clock, the flush, the recheck or the floor. It
writes one result file per puzzle. The verification runs the puzzle's CPU cases on the GPU (their tensors
moved with transfer.StorageTransfer, so views keep their strides) and returns the memory for the grader to
compare; the timing follows timing.py.
"""
import os
import statistics
import sys
import warnings
from pathlib import Path

import torch

from ..course import load_course
from . import compiled
from .timing import floor_seconds, peaks, time_against_baseline, time_call
from .transfer import StorageTransfer

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
AUTOTUNE_CALLS = 7  # a single timed call is noisy enough to pick the wrong configuration


def measure_device():
    """This run's copy, read and write bandwidths and fp16 matmul rate, and what the GPU and its software are.

    Each is a peak, the ceiling a kernel's time is measured against: the fastest of a few calls, after calls that
    bring the GPU's clocks up. (Medians of calls from a cold start have measured an H200's reads at 3.7 TB/s, a
    tenth under what the same GPU read minutes later, and so put a vector add above 100% of the roofline.)"""
    def best_of(fn, calls=10, warm_up=3):
        for _ in range(warm_up):
            fn()
        times = []
        for _ in range(calls):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return min(times)

    # A kernel's roofline is the time its reads take at the read bandwidth plus its writes at the write
    # bandwidth, both measured here (a copy, half of each, checks that the two add up).
    buffers = [torch.ones(2 ** 28, dtype=torch.float32, device="cuda") for _ in range(2)]
    copy = 2 * 2 ** 30 / best_of(lambda: buffers[1].copy_(buffers[0]))
    read = 2 ** 30 / best_of(lambda: buffers[0].sum())
    write = 2 ** 30 / best_of(lambda: buffers[1].fill_(2.0))
    buffers.clear()
    a = torch.randn(8192, 8192, dtype=torch.float16, device="cuda")  # never time on zeros: they run faster
    matmul = 2 * 8192 ** 3 / best_of(lambda: a @ a)
    import triton
    properties = torch.cuda.get_device_properties(0)
    return {"name": properties.name, "driver": _driver(), "cuda": str(torch.version.cuda), "torch": str(torch.__version__),
            "triton": str(triton.__version__), "copy_bandwidth": copy, "read_bandwidth": read,
            "write_bandwidth": write, "matmul_rate": matmul,
            "l2_bytes": getattr(properties, "L2_cache_size", 0)}


def _driver():
    import subprocess
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


class Kernels:
    """The job's compiled kernels, loaded when first launched."""

    def __init__(self, variants, directory):
        self.variants, self.directory, self.loaded = variants, directory, {}

    def launcher(self, key, grid):
        if key not in self.loaded:
            self.loaded[key] = compiled.load(self.variants[key], self.directory, key)
        variant, kernel = self.variants[key], self.loaded[key]
        grid = tuple(grid) + (1,) * (3 - len(grid))  # a compiled kernel's launcher takes all three dimensions
        return lambda *args: kernel[grid](*compiled.launch_args(variant, args))


def verify(kernels, case, key):
    """Run one CPU case on the GPU, each launch with the binary key(launch index); return the parents' memory
    afterwards (the grader compares it)."""
    parents = {name: tensor["parent"].clone() for name, tensor in case["buffers"].items()}
    by_storage = {case["buffers"][n]["parent"].untyped_storage().data_ptr(): n for n in parents}
    transfer = StorageTransfer(list(parents.values()), "cuda")
    moved = dict(zip(parents, transfer.moved))
    error = None
    for launch_index, plan in enumerate(case["launches"]):
        args = [moved[by_storage[a.untyped_storage().data_ptr()]].as_strided(a.shape, a.stride(), a.storage_offset())
                if isinstance(a, torch.Tensor) else a for a in plan["args"]]
        grid = tuple(plan["grid"])
        try:
            kernels.launcher(key(launch_index), grid)(*args)
            torch.cuda.synchronize()
        except Exception as exc:  # a launch failure (too many resources, an illegal address)
            error = {"kind": "kernel_error", "message": f"{type(exc).__name__}: {exc}", "program": [0],
                     "line": None, "module": None}
            break
    transfer.copy_back()
    return _run(parents, error)


def _run(parents, error):
    """A case's run as the grader reads it (protocol.check_runs), of the memory a GPU run leaves."""
    return {"order": "sequential", "error": error, "printed": "", "parents": parents, "race": {}, "read_unwritten": {},
            "writers": {n: torch.zeros(p.numel(), dtype=torch.int64) for n, p in parents.items()},
            "readers": {n: torch.zeros(p.numel(), dtype=torch.int64) for n, p in parents.items()},
            "loads": {n: 0 for n in parents}, "repeated": {n: 0 for n in parents}}


def bench_puzzle(job, course, device, directory):
    puzzle = course.puzzle(job["puzzle"])
    benchmark = puzzle.benchmark
    kernels = Kernels(job["compiled"], directory)
    runs = []
    for index, case in enumerate(job["cases"]):
        if index in job["pruned"]:  # the kernel's early_config_prune keeps it off: it has no binary
            parents = {name: tensor["parent"].clone() for name, tensor in case["buffers"].items()}
            run = {**_run(parents, None), "pruned": job["pruned"][index]}
        else:
            run = verify(kernels, case, lambda launch: f"verify-{index}-{launch}")
        if run["error"] is None:  # again with each other configuration's constants the compile sandbox built
            run["variants"] = [verify(kernels, case, lambda launch, v=variant: f"verify-{index}-{launch}-{v}")
                               if ran else None for variant, ran in enumerate(job["variants"][index])]
        runs.append(run)
    if not job["timed"] or any(run["error"] for run in runs):  # the verdict is the failed case's
        return {"cases": runs, "timings": []}
    dtype = DTYPES[benchmark.dtype]
    flush_buffer = torch.empty(max(device["l2_bytes"] * 8, 2 ** 30), dtype=torch.uint8, device="cuda")
    generator = torch.Generator(device="cuda")
    names = [t.name for t in puzzle.tensors if t.role == "input" and t.init is None]

    def fresh_inputs(sizes):
        generator.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)  # unpredictable to the submission
        return [torch.randn(t.shape_at(sizes), generator=generator, device="cuda", dtype=dtype)
                for t in puzzle.tensors if t.role == "input" and t.init is None]

    def launcher(key, launch, sizes):
        def run(inputs):
            outputs = {t.name: torch.empty(t.shape_at(sizes), dtype=DTYPES[t.dtype] if t.dtype else dtype,
                                           device="cuda") for t in puzzle.tensors if t.role == "output"}
            namespace = {**sizes, **launch["kwargs"], **dict(zip(names, inputs)), **outputs}
            args = [expression(namespace) for expression in puzzle.args.values()]
            grid = tuple(int(g(namespace)) for g in puzzle.grid)
            kernels.launcher(key, grid)(*args)
            return next(iter(outputs.values()))
        return run

    def baseline(inputs):
        return benchmark.baseline(**dict(zip(names, inputs)))

    peak = peaks(device["name"], device)
    timings = []
    configs = job["configs"] or [{}]
    for size_index, sizes in enumerate(benchmark.sizes):
        launches = [(f"time-{size_index}-{c}", benchmark.launch_config(configs[c], sizes))
                    for c in job["kept"][size_index]]  # those the kernel's early_config_prune keeps at these sizes
        key, launch = _autotune(launches, lambda k, l: launcher(k, l, sizes), lambda: fresh_inputs(sizes),
                                flush_buffer.zero_)
        try:
            result = time_against_baseline(launcher(key, launch, sizes), baseline, lambda: fresh_inputs(sizes),
                                           benchmark.dtype, flush_buffer.zero_)
        except Exception as exc:  # the binary does not load or launch at this size (too many resources, ...)
            timings.append({"failed": f"{type(exc).__name__}: {exc}"})
            break
        namespace = {**sizes, "itemsize": torch.empty(0, dtype=dtype).element_size()}
        work = {k: float(e(namespace)) if e is not None else None
                for k, e in (("bytes", benchmark.bytes), ("flops", benchmark.flops))}
        timings.append({"sizes": dict(sizes), "config": launch, **work, **result,
                        "floor": floor_seconds(work["bytes"], work["flops"], benchmark.dtype, peak)})
    return {"cases": runs, "timings": timings}


def _autotune(launches, launcher, fresh_inputs, flush):
    """The fastest of the configurations at these sizes, by the median of a few calls each on a flushed L2
    cache, as they are timed after (none of this is part of a reported time)."""
    if len(launches) == 1:
        return launches[0]
    inputs = fresh_inputs()
    timed = []
    for index, (key, launch) in enumerate(launches):
        run = launcher(key, launch)
        try:
            run(inputs)  # loads the binary
            torch.cuda.synchronize()
        except Exception:
            continue
        times = [time_call(run, inputs, flush)[0] for _ in range(AUTOTUNE_CALLS)]
        timed.append((statistics.median(times), index))
    return launches[min(timed)[1]] if timed else launches[0]


def _scratch(size, alignment, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


def main(request_path, results):
    warnings.simplefilter("ignore")
    import triton
    # A kernel that makes tensor descriptors (tl.make_tensor_descriptor) asks its launcher for scratch memory.
    triton.set_allocator(_scratch)
    request = torch.load(request_path, weights_only=True)
    course = load_course(request["course_path"], text=request["course"])
    results = Path(results)
    device_file = results / "device.pt"
    device = None
    if any(job["timed"] for job in request["puzzles"]):  # only what is timed needs this run's rates
        device = torch.load(device_file, weights_only=True) if device_file.exists() else measure_device()
        torch.save(device, device_file)
    for job in request["puzzles"]:
        (results / f"{job['id']}.started").touch()
        outcome = bench_puzzle(job, course, device, results / "kernels")
        torch.save(outcome, results / f"{job['id']}.partial")
        (results / f"{job['id']}.partial").rename(results / f"{job['id']}.pt")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
