"""The GPU side of `triton-course bench`: verify a compiled kernel on the GPU, then time it against PyTorch.

`python -m grader.gpu.worker REQUEST RESULTS`, started (and restarted after a crash) by sandbox.run_worker like
the CPU worker, writes one result file per puzzle. The verification runs the puzzle's CPU cases on the GPU
(their tensors moved with transfer.StorageTransfer, so views keep their strides) and returns the memory
for the grader to compare; the timing follows timing.py.
"""
import os
import statistics
import sys
import warnings
from pathlib import Path

import torch

from ..course import load_course
from .timing import floor_seconds, peaks, time_against_baseline, time_call
from .transfer import StorageTransfer
from ..pipeline.worker import import_module, module_name

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
AUTOTUNE_CALLS = 7  # a single timed call is noisy enough to pick the wrong configuration


def measure_device():
    """This run's copy bandwidth and fp16 matmul rate, and what the GPU and its software are."""
    def best_of(fn, calls=10):
        times = []
        for _ in range(calls):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return sorted(times)[len(times) // 2]

    buffers = [torch.empty(2 ** 30, dtype=torch.uint8, device="cuda") for _ in range(2)]
    copy = 2 * 2 ** 30 / best_of(lambda: buffers[1].copy_(buffers[0]))
    buffers.clear()
    a = torch.randn(8192, 8192, dtype=torch.float16, device="cuda")  # never time on zeros: they run faster
    matmul = 2 * 8192 ** 3 / best_of(lambda: a @ a)
    import triton
    properties = torch.cuda.get_device_properties(0)
    return {"name": properties.name, "driver": _driver(), "cuda": str(torch.version.cuda), "torch": str(torch.__version__),
            "triton": str(triton.__version__), "copy_bandwidth": copy, "matmul_rate": matmul,
            "l2_bytes": getattr(properties, "L2_cache_size", 0)}


def _driver():
    import subprocess
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def verify(kernel, case, config):
    """Run one CPU case on the GPU; return the parents' memory afterwards (the grader compares it)."""
    parents = {name: tensor["parent"].clone() for name, tensor in case["buffers"].items()}
    by_storage = {case["buffers"][n]["parent"].untyped_storage().data_ptr(): n for n in parents}
    transfer = StorageTransfer(list(parents.values()), "cuda")
    moved = dict(zip(parents, transfer.moved))
    error = None
    for plan in case["launches"]:
        args = [moved[by_storage[a.untyped_storage().data_ptr()]].as_strided(a.shape, a.stride(), a.storage_offset())
                if isinstance(a, torch.Tensor) else a for a in plan["args"]]
        try:
            kernel[tuple(plan["grid"])](*args, **{k: v for k, v in config.items() if k != "kwargs"})
            torch.cuda.synchronize()
        except Exception as exc:  # a compile or launch failure for this configuration
            error = {"kind": "kernel_error", "message": f"{type(exc).__name__}: {exc}"}
            break
    transfer.copy_back()
    return {"order": "sequential", "error": error, "printed": "", "parents": parents, "race": {},
            "writers": {n: torch.zeros(p.numel(), dtype=torch.int64) for n, p in parents.items()},
            "readers": {n: torch.zeros(p.numel(), dtype=torch.int64) for n, p in parents.items()},
            "loads": {n: 0 for n in parents}}


def bench_puzzle(job, device, directory):
    puzzle = load_course(job["course"]).puzzle(job["puzzle"])
    benchmark = puzzle.benchmark
    module, _ = import_module(job["module"], directory, module_name(job["id"]))
    kernel = getattr(module, job["kernel"])
    configs = job["configs"]
    first = benchmark.sizes[0]
    verification_config = {k: v for k, v in benchmark.launch_config(configs[0], first).items() if k != "kwargs"}
    cases = [{"runs": [verify(kernel, case, verification_config)]} for case in job["cases"]]
    dtype = DTYPES[benchmark.dtype]
    flush_buffer = torch.empty(max(device["l2_bytes"] * 8, 2 ** 30), dtype=torch.uint8, device="cuda")
    generator = torch.Generator(device="cuda")

    def fresh_inputs(sizes):
        generator.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)  # unpredictable to the submission
        inputs = {}
        for tensor in puzzle.tensors:
            if tensor.role == "input" and tensor.init is None:
                inputs[tensor.name] = torch.randn(tensor.shape_at(sizes), generator=generator, device="cuda",
                                                  dtype=dtype)
        return inputs

    def launcher(config, sizes):
        def run(inputs):
            tensors = dict(zip(names, inputs))
            outputs = {t.name: torch.empty(t.shape_at(sizes),
                                           dtype=DTYPES[t.dtype] if t.dtype else dtype, device="cuda")
                       for t in puzzle.tensors if t.role == "output"}
            namespace = {**sizes, **config["kwargs"], **tensors, **outputs}
            args = [expression(namespace) for expression in puzzle.args.values()]
            grid = tuple(int(g(namespace)) for g in puzzle.grid)
            kernel[grid](*args, **{k: v for k, v in config.items() if k != "kwargs"})
            return next(iter(outputs.values()))
        return run

    names = [t.name for t in puzzle.tensors if t.role == "input" and t.init is None]

    def baseline(inputs):
        return benchmark.baseline(**dict(zip(names, inputs)))

    peak = peaks(device["name"], device)
    timings = []
    for sizes in benchmark.sizes:
        config = benchmark.launch_config(_autotune(configs, benchmark, sizes, launcher, fresh_inputs, names,
                                                   flush_buffer.zero_), sizes)
        result = time_against_baseline(launcher(config, sizes), baseline,
                                       lambda: [fresh_inputs(sizes)[n] for n in names], benchmark.dtype,
                                       flush_buffer.zero_)
        namespace = {**sizes, "itemsize": torch.empty(0, dtype=dtype).element_size()}
        work = {k: float(e(namespace)) if e is not None else None
                for k, e in (("bytes", benchmark.bytes), ("flops", benchmark.flops))}
        timings.append({"sizes": sizes, "config": config, **work, **result,
                        "floor": floor_seconds(work["bytes"], work["flops"], benchmark.dtype, peak)})
    return {"cases": cases, "timings": timings}


def _autotune(configs, benchmark, sizes, launcher, fresh_inputs, names, flush):
    """The fastest of the submission's configurations at these sizes, by the median of a few calls each
    on a flushed L2 cache, as they are timed after (none of this is part of a reported time)."""
    if len(configs) == 1:
        return configs[0]
    inputs = [fresh_inputs(sizes)[n] for n in names]
    timed = []
    for index, config in enumerate(configs):
        run = launcher(benchmark.launch_config(config, sizes), sizes)
        try:
            run(inputs)  # compiles
            torch.cuda.synchronize()
        except Exception:
            continue
        times = [time_call(run, inputs, flush)[0] for _ in range(AUTOTUNE_CALLS)]
        timed.append((statistics.median(times), index, config))
    return min(timed)[2] if timed else configs[0]


def main(request_path, results):
    warnings.simplefilter("ignore")
    request = torch.load(request_path, weights_only=True)
    results = Path(results)
    device_file = results / "device.pt"
    device = torch.load(device_file, weights_only=True) if device_file.exists() else measure_device()
    torch.save(device, device_file)
    for job in request["puzzles"]:
        (results / f"{job['id']}.started").touch()
        outcome = bench_puzzle(job, device, results)
        torch.save(outcome, results / f"{job['id']}.partial")
        (results / f"{job['id']}.partial").rename(results / f"{job['id']}.pt")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
