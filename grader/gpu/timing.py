"""The GPU stage's timing protocol, written to resist the tricks seen on kernel leaderboards.

- JIT compilation and autotuning happen before anything is timed.
- Every timed call gets fresh inputs, drawn from a seed the submission cannot see, so nothing can be cached
  by pointer or by value, and the L2 cache is flushed (a buffer larger than it is written) before it.
- The kernel and the PyTorch baseline are timed in alternation, in the same run, with CUDA events.
- Every timed output is rechecked against the baseline's, and the inputs must come back unchanged.
- Calls are repeated until the median's spread (interquartile range over median) is small.
- A time below the physical floor (bytes over peak bandwidth, flops over peak rate) is rejected.
"""
import statistics

# Datasheet peaks: HBM bandwidth (bytes/s), dense tensor-core fp16/bf16 and plain fp32 rates (flop/s).
PEAKS = {
    "H200": {"bandwidth": 4.8e12, "float16": 989e12, "bfloat16": 989e12, "float32": 67e12},
    "H100": {"bandwidth": 3.35e12, "float16": 989e12, "bfloat16": 989e12, "float32": 67e12},
    "A100": {"bandwidth": 2.04e12, "float16": 312e12, "bfloat16": 312e12, "float32": 19.5e12},
}
MIN_CALLS, MAX_CALLS, TARGET_SPREAD, BUDGET_S = 10, 200, 0.03, 10.0
# Normalised error allowed on a rechecked output: max |out - baseline| / max |baseline|. Tight enough that
# computing in a narrower type than asked fails.
RECHECK_TOLERANCE = {"float32": 1e-5, "float16": 4e-3, "bfloat16": 2e-2}


def peaks(device_name, measured):
    """The floor's peaks: the datasheet's for known GPUs, else 1.25 x what this run measured."""
    for name, values in PEAKS.items():
        if name in device_name:
            return values
    return {"bandwidth": 1.25 * measured["copy_bandwidth"], "float16": 1.25 * measured["matmul_rate"],
            "bfloat16": 1.25 * measured["matmul_rate"], "float32": 1.25 * measured["matmul_rate"] / 15}


def floor_seconds(work_bytes, flops, dtype, peak):
    """The least time the work can take on this GPU."""
    floors = [0.0]
    if work_bytes:
        floors.append(work_bytes / peak["bandwidth"])
    if flops:
        floors.append(flops / peak[dtype])
    return max(floors)


def summary(samples):
    """Median, relative spread (interquartile range over median) and count of timings in seconds."""
    ordered = sorted(samples)
    median = statistics.median(ordered)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else [median, median, median]
    return {"median": median, "spread": (quartiles[2] - quartiles[0]) / median if median else 0.0,
            "calls": len(ordered)}


def settled(samples):
    return len(samples) >= MIN_CALLS and summary(samples)["spread"] <= TARGET_SPREAD


def normalised_error(out, expected):
    import torch
    scale = expected.abs().max().float().clamp_min(torch.finfo(torch.float32).tiny)
    return float(((out.float() - expected.float()).abs().max() / scale).nan_to_num(float("inf")))


def time_call(fn, inputs, flush_l2):
    """(seconds, output) of one call fn(inputs) on a flushed L2 cache, between CUDA events."""
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    # No synchronisation between the flush and the call: the host prepares the launch while the GPU is
    # still flushing, so the time between the events is the kernel's, not the launcher's.
    flush_l2()
    start.record()
    output = fn(inputs)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3, output


def time_against_baseline(kernel, baseline, fresh_inputs, dtype, flush_l2):
    """Time kernel(inputs) -> output and baseline(inputs) -> output in alternation on fresh inputs.

    Returns {"kernel": summary, "baseline": summary} or {"rejected": reason}.
    """
    import time

    import torch
    kernel_times, baseline_times = [], []
    warm_up = fresh_inputs()
    kernel(warm_up), baseline(warm_up)  # compilation and first-call costs are not timed
    torch.cuda.synchronize()
    started = time.monotonic()
    for call in range(MAX_CALLS):
        inputs = fresh_inputs()
        originals = [t.clone() for t in inputs]
        order = [("baseline", baseline), ("kernel", kernel)]
        outputs = {}
        for name, fn in (order if call % 2 else order[::-1]):
            seconds, outputs[name] = time_call(fn, inputs, flush_l2)
            (kernel_times if name == "kernel" else baseline_times).append(seconds)
        if not all(torch.equal(a, b) for a, b in zip(inputs, originals)):
            return {"rejected": "the kernel changed its inputs"}
        error = normalised_error(outputs["kernel"], outputs["baseline"])
        if error > RECHECK_TOLERANCE[dtype]:
            return {"rejected": f"a timed output differs from the baseline's (normalised error {error:.2e} > "
                                f"{RECHECK_TOLERANCE[dtype]:g}): wrong, or computed in a narrower type"}
        if settled(kernel_times) and settled(baseline_times) or time.monotonic() - started > BUDGET_S:
            break
    return {"kernel": summary(kernel_times), "baseline": summary(baseline_times)}
