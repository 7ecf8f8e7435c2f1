"""`triton-course bench`: a submission's kernels compiled for real, verified and timed on a GPU.

The grader's side: it reads the submission (never runs it), validates the submission's launch
configurations, makes the verification cases, has the GPU worker (gpu.py, restarted if it crashes) verify
and time each kernel, compares the verification with the reference, and writes the results as JSON.
"""
import json
import resource
import tempfile
from dataclasses import replace
from pathlib import Path

import torch

from ..pipeline.cases import make_case
from ..pipeline.grade import run_case
from ..pipeline.protocol import case_payload
from ..pipeline.load import SubmissionError, load_submission
from ..pipeline.sandbox import run_worker
from ..settings import DEFAULT

NUM_WARPS = (1, 2, 4, 8, 16)


class NoGPU(SubmissionError):
    """This machine has no CUDA GPU to benchmark on."""


def validate_configs(puzzle, configs):
    """The submission's GPU configurations (@triton.autotune or GPU_CONFIGS), checked; [] when it declares none."""
    problems, valid = [], []
    for config in configs or []:
        if "error" in config:
            problems.append(config["error"])
            continue
        kwargs = config["kwargs"]
        if not isinstance(kwargs, dict) or set(kwargs) - set(puzzle.blocks):
            problems.append(f"{config}: the configurable parameters are {', '.join(puzzle.blocks)}")
        elif any(not isinstance(v, int) or v < 1 or v & (v - 1) or v > 2 ** 16 for v in kwargs.values()):
            problems.append(f"{config}: block sizes are powers of 2 up to 65536")
        elif config.get("num_warps", 4) not in NUM_WARPS:
            problems.append(f"{config}: num_warps is one of {NUM_WARPS}")
        elif not 1 <= config.get("num_stages", 3) <= 8:
            problems.append(f"{config}: num_stages is between 1 and 8")
        else:
            valid.append(config)
    return valid, problems


def bench_submission(course, path, puzzle_ids=None, settings=DEFAULT, student=None):
    if not torch.cuda.is_available():
        raise NoGPU("no CUDA GPU here: `triton-course bench` compiles and times kernels on a GPU. On this machine, "
                    "`triton-course check` grades them in the interpreter and `triton-course inspect` shows what "
                    "the compiler makes of them.")
    loaded = load_submission(path, course, puzzle_ids)
    results, jobs, verification = [], {}, {}
    for puzzle_id, item in loaded.items():
        puzzle = course.puzzle(puzzle_id)
        entry = {"id": puzzle_id, "title": puzzle.title}
        if puzzle.benchmark is None:
            results.append({**entry, "status": "no_benchmark", "reason": "this puzzle has no GPU benchmark"})
        elif item.status != "found":
            results.append({**entry, "status": item.status, "reason": item.diagnostics[0].message})
        else:
            configs, problems = validate_configs(puzzle, item.source.configs)
            if problems:
                results.append({**entry, "status": "error", "reason": "invalid tuning configuration: "
                                + "; ".join(problems)})
                continue
            cases = [make_case(puzzle, i) for i in verification_cases(puzzle)]
            verification[puzzle_id] = item.source
            jobs[puzzle_id] = {"id": puzzle_id, "puzzle": puzzle_id, "course": str(course.path), "kernel": puzzle.kernel,
                               "module": item.source.module, "configs": configs or [{}],
                               "cases": [case_payload(puzzle, case) for case in cases]}
            results.append({**entry, "status": "pending"})
    device = None
    with tempfile.TemporaryDirectory(prefix="triton-course-bench-") as scratch:
        scratch = Path(scratch)
        out = scratch / "results"
        out.mkdir()
        torch.save({"puzzles": list(jobs.values())}, scratch / "request.pt")
        # CUDA reserves far more address space than it uses: no address-space limit for the GPU worker.
        gpu_settings = replace(settings, memory_limit_bytes=resource.RLIM_INFINITY, puzzle_timeout_s=900)
        endings = run_worker(scratch / "request.pt", out, scratch, gpu_settings, list(jobs), module="grader.gpu.worker",
                             gpu=True) if jobs else {}
        if (out / "device.pt").exists():
            device = torch.load(out / "device.pt", weights_only=True)
        for result in results:
            if result["status"] != "pending":
                continue
            puzzle = course.puzzle(result["id"])
            if result["id"] in endings:
                ending = endings[result["id"]]
                result.update(status="error", reason=f"{ending.kind}: {ending.message}")
                continue
            outcome = torch.load(out / f"{result['id']}.pt", weights_only=True)
            result.update(_judge(puzzle, verification[result["id"]], outcome, settings))
    return {"student": student or Path(path).stem, "device": device, "puzzles": results}


def verification_cases(puzzle):
    """The indices of the puzzle's cases verified on the GPU: those in the benchmark's dtype.

    The CPU stage holds every case to its dtype; on a GPU, tl.dot multiplies float32 in TF32, so a float32
    case of a float16 benchmark would test the hardware's precision rather than the kernel.
    """
    same = [i for i, case in enumerate(puzzle.cases) if case.dtype == puzzle.benchmark.dtype]
    return same or list(range(len(puzzle.cases)))


def _judge(puzzle, source, outcome, settings):
    failures = []
    for index, case in zip(verification_cases(puzzle), outcome["cases"]):
        failures += run_case(puzzle, index, source, case["runs"][0], 0, settings)[0]
    if failures:
        return {"status": "fail", "reason": f"wrong on the GPU in case '{failures[0].case}': {failures[0].message}"}
    timings = []
    for timing in outcome["timings"]:
        if "rejected" in timing:
            return {"status": "rejected", "reason": timing["rejected"]}
        seconds = timing["kernel"]["median"]
        if seconds < timing["floor"]:
            return {"status": "rejected", "reason": f"{seconds * 1e6:.1f} us at {timing['sizes']} is below the "
                                                    f"physical floor of {timing['floor'] * 1e6:.1f} us"}
        timings.append({"sizes": timing["sizes"], "config": timing["config"], "time_s": seconds,
                        "spread": timing["kernel"]["spread"], "calls": timing["kernel"]["calls"],
                        "baseline_time_s": timing["baseline"]["median"],
                        "speedup": timing["baseline"]["median"] / seconds,
                        "bytes": timing["bytes"], "flops": timing["flops"]})
    return {"status": "pass", "timings": timings}


def rates(result, device):
    """Add GB/s or TFLOP/s and the fraction of this run's copy bandwidth or matmul rate to each timing."""
    for timing in result.get("timings", []):
        if timing["flops"]:
            timing["tflops"] = timing["flops"] / timing["time_s"] / 1e12
            timing["fraction"] = timing["flops"] / timing["time_s"] / device["matmul_rate"]
        else:
            timing["gbps"] = timing["bytes"] / timing["time_s"] / 1e9
            timing["fraction"] = timing["bytes"] / timing["time_s"] / device["copy_bandwidth"]
    return result


def write_results(results, out):
    for result in results["puzzles"]:
        rates(result, results["device"] or {})
    Path(out).write_text(json.dumps(results, indent=2))
