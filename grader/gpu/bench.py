"""`triton-course bench`: a submission's kernels compiled for real, verified and timed on a GPU.

The grader's side. It reads the submission (the load stage: never runs it), makes the verification cases,
and has two sandboxed processes do the work: the compile sandbox (compile_worker.py), the only one that runs
any of the submission's Python, turns each kernel into compiled binaries for every launch to come, and the
timing process (timing_worker.py), which runs none of it, verifies and times those binaries. The grader
checks what each returns (the configurations, the binaries, the memory, the times), compares the
verification with the reference, applies the physical floor and writes the results as JSON.
"""
import json
import math
import os
import resource
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import torch

from . import compiled
from ..course import with_configuration_cases
from ..pipeline.configs import validate_configs
from .timing import floor_seconds, peaks
from ..pipeline.cases import make_case
from ..pipeline.grade import module_stopped_message, run_case
from ..pipeline.load import MAIN, SubmissionError, load_read, read_submission
from ..pipeline.protocol import (MalformedResult, case_payload, check_runs, kernel_request, module_raised,
                                  read_result)
from ..pipeline.results import printable
from ..pipeline.sandbox import run_worker
from ..settings import DEFAULT


class NoGPU(SubmissionError):
    """This machine has no CUDA GPU to benchmark on."""


def gpu_target():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def compile_in_sandbox(course, jobs, target, settings, scratch, workers=1):
    """{job key: checked compile outcome or an error message} of the compile sandbox's work on `jobs`
    ({key: compile_job}), `workers` sandboxes at once, each on its share."""
    def run_share(index, share):
        directory = Path(scratch) / f"compile{index}"
        directory.mkdir()
        endings = run_worker([jobs[key] for key in share], directory, settings, module="grader.gpu.compile_worker",
                             shared={"course": course.text_for([jobs[key]["puzzle"] for key in share]),
                                     "course_path": str(course.path), "target": target})
        outcomes = {}
        for key in share:
            job_id = jobs[key]["id"]
            if job_id in endings:
                outcomes[key] = f"{endings[job_id].kind}: {endings[job_id].message}"
                continue
            try:
                outcomes[key] = _check_compiled(read_result(directory / "results" / f"{job_id}.pt", settings), jobs[key])
            except (MalformedResult, compiled.BadCompiled) as error:
                outcomes[key] = f"the compile sandbox's result is malformed: {error}"
        return outcomes

    shares = [share for share in (list(jobs)[i::max(1, workers)] for i in range(max(1, workers))) if share]
    outcomes = {}
    with ThreadPoolExecutor(max_workers=len(shares) or 1) as pool:
        for result in pool.map(run_share, range(len(shares)), shares):
            outcomes.update(result)
    return outcomes


def _check_compiled(outcome, job):
    if isinstance(outcome, dict) and outcome.get("module_raised") is not None:
        return {"module_raised": module_raised(outcome["module_raised"], job["modules"])}
    if not isinstance(outcome, dict) or not isinstance(outcome.get("compiled"), dict) or \
            not isinstance(outcome.get("problems"), dict) or not isinstance(outcome.get("configs"), list):
        raise MalformedResult("not a compile outcome")
    ptxas = outcome.get("ptxas")
    return {"configs": outcome["configs"], "ptxas": ptxas[:4000] if isinstance(ptxas, str) else None,
            "compiled": {key: compiled.check(data, job["params"]) for key, data in outcome["compiled"].items()
                         if isinstance(key, str)},
            "problems": {key: _problem(problem) for key, problem in outcome["problems"].items()},
            # checked with the puzzle: _pruning, inspection._launch
            "kept": outcome.get("kept"), "pruned": outcome.get("pruned"), "variants": outcome.get("variants"),
            "inspected": outcome.get("inspected")}


def _problem(problem):
    if not isinstance(problem, dict) or not isinstance(problem.get("message"), str):
        raise MalformedResult("a compile problem is malformed")
    line, module = problem.get("line"), problem.get("module")
    return {"message": problem["message"][:4000], "line": line if type(line) is int else None,
            "module": module if isinstance(module, str) else None}


def compile_job(puzzle, source, verification=(), inspect=False, timed=True, job_id=None):
    """The compile sandbox's job: the rebuilt modules, the configurations and pruner to read, and the launches of
    the `verification` cases (their payloads) to compile."""
    return {"id": job_id or puzzle.id, "puzzle": puzzle.id, **kernel_request(source), "params": list(source.params),
            "configs": source.configs, "configs_module": source.configs_module,
            "verification": [{"launches": [{"args": launch["args"]} for launch in case["launches"]],
                              "configuration": case.get("configuration", False)} for case in verification],
            "inspect": inspect, "timed": timed and puzzle.benchmark is not None}


def bench_submission(course, path, puzzle_ids=None, settings=DEFAULT, student=None, timed=True):
    """The GPU stage's results for a submission: every benchmarked puzzle verified and timed, or with
    `timed=False` every puzzle verified on the GPU only."""
    require_gpu()
    return bench_read(course, read_submission(path, course, puzzle_ids, settings), puzzle_ids, settings,
                      student or Path(path).stem, timed)


def require_gpu():
    if not torch.cuda.is_available():
        raise NoGPU("no CUDA GPU here: `triton-course bench` compiles and times kernels on a GPU. On this machine, "
                    "`triton-course check` grades them in the interpreter and `triton-course inspect` shows what "
                    "the compiler makes of them.")


def bench_read(course, submission, puzzle_ids=None, settings=DEFAULT, student=None, timed=True):
    """bench_submission of a Submission already read (on whatever machine: a cluster's GPU worker)."""
    loaded = load_read(submission, course, puzzle_ids, settings)
    results, entries = [], {}
    for puzzle_id, item in loaded.items():
        puzzle = course.puzzle(puzzle_id)
        entry = {"id": puzzle_id, "title": puzzle.title}
        if timed and puzzle.benchmark is None:
            results.append({**entry, "status": "no_benchmark", "reason": "this puzzle has no GPU benchmark"})
        elif item.status != "found":
            results.append({**entry, "status": item.status, "reason": item.diagnostics[0].message})
        elif timed and item.source.config_problems:
            results.append({**entry, "status": "error", "reason": "invalid tuning configuration: "
                            + "; ".join(item.source.config_problems)})
        else:
            entries[puzzle_id] = (puzzle, item.source)
            results.append({**entry, "status": "pending"})
    verdicts, device = run_on_gpu(course, entries, settings, timed)
    for result in results:
        if result["status"] == "pending":
            result.update(verdicts[result["id"]])
    for result in results:
        rates(result, device or {})
    return {"student": student, "device": device, "puzzles": results}


def run_on_gpu(course, entries, settings=DEFAULT, timed=True, workers=1):
    """({key: {"status", "reason" or "timings"}}, the device) for {key: (puzzle, KernelSource)} run on this
    machine's GPU: compiled in the sandbox (`workers` at once), verified on every case of the puzzle, and timed
    at its benchmark's sizes when `timed` and it has a benchmark."""
    # Verified at the blocks it is timed at too, as the CPU check does.
    entries = {key: (source.with_configuration_cases(puzzle), source) for key, (puzzle, source) in entries.items()}
    ids = {key: f"job{index}" for index, key in enumerate(entries)}
    verdicts, device = {}, None
    with tempfile.TemporaryDirectory(prefix="triton-course-gpu-") as scratch:
        payloads, jobs, compiled_jobs = _compiled(course, entries, ids, timed, settings, scratch, workers)
        if timed:
            # Configurations computed by code the load stage does not run are known only now: a kernel is verified
            # at every block size it is timed at, so those it adds are compiled and verified too.
            tuned = {key: (with_configuration_cases(puzzle, _configured(puzzle, source, compiled_jobs[key]), True),
                           source) for key, (puzzle, source) in entries.items()}
            again = {key: entry for key, entry in tuned.items() if entry[0] is not entries[key][0]}
            if again:
                entries.update(again)
                more = _compiled(course, again, ids, timed, settings, Path(scratch) / "again", workers)
                for found, added in zip((payloads, jobs, compiled_jobs), more):
                    found.update(added)
        timing_jobs = {}
        for key, (puzzle, source) in entries.items():
            verdict = _compile_verdict(puzzle, source, compiled_jobs[key], payloads[key], jobs[key]["timed"])
            if verdict:
                verdicts[key] = verdict
                continue
            timing_jobs[key] = {"id": ids[key], "puzzle": puzzle.id, "cases": payloads[key], "timed": jobs[key]["timed"],
                                "compiled": compiled_jobs[key]["compiled"], "configs": compiled_jobs[key]["valid"],
                                "kept": compiled_jobs[key]["kept"], "pruned": compiled_jobs[key]["pruned"],
                                "variants": compiled_jobs[key]["variants"]}
        timing = Path(scratch) / "timing"
        timing.mkdir()
        out = timing / "results"
        # CUDA reserves far more address space than it uses: no address-space limit for the GPU process.
        gpu_settings = replace(settings, memory_limit_bytes=resource.RLIM_INFINITY, puzzle_timeout_s=900)
        shared = {"course": course.text_for([job["puzzle"] for job in timing_jobs.values()]),
                  "course_path": str(course.path)}
        endings = run_worker(list(timing_jobs.values()), timing, gpu_settings, module="grader.gpu.timing_worker",
                             gpu=True, shared=shared) if timing_jobs else {}
        if timing_jobs and os.path.lexists(out / "device.pt"):
            try:
                device = _device(read_result(out / "device.pt", settings))
            except MalformedResult:
                device = None
        for key, job in timing_jobs.items():
            puzzle, source = entries[key]
            if job["id"] in endings:
                ending = endings[job["id"]]
                verdicts[key] = {"status": "error", "reason": f"{ending.kind}: {ending.message}"}
                continue
            try:
                outcome = read_result(out / f"{job['id']}.pt", settings)
                verdicts[key] = _judge(puzzle, source, outcome, device, settings, job["timed"], job["pruned"])
            except MalformedResult as error:
                verdicts[key] = {"status": "error", "reason": f"the timing process's result is malformed: {error}"}
    return verdicts, device


def _compiled(course, entries, ids, timed, settings, scratch, workers):
    """(verification payloads, compile jobs, their outcomes) of {key: (puzzle, KernelSource)}."""
    payloads = {key: [case_payload(puzzle, make_case(puzzle, i)) for i in range(len(puzzle.cases))]
                for key, (puzzle, _) in entries.items()}
    jobs = {key: compile_job(puzzle, source, payloads[key], timed=timed, job_id=ids[key])
            for key, (puzzle, source) in entries.items()}
    Path(scratch).mkdir(exist_ok=True)
    compiled_jobs = compile_in_sandbox(course, jobs, gpu_target(), replace(settings, puzzle_timeout_s=900),
                                       scratch, workers) if jobs else {}
    return payloads, jobs, compiled_jobs


def _configured(puzzle, source, outcome):
    """The blocks of each valid configuration the compile sandbox read ({block: value}, the course's names)."""
    if not isinstance(outcome, dict):
        return []
    valid, problems = validate_configs(puzzle, outcome.get("configs"), source.params)
    return [] if problems else [config["kwargs"] for config in valid]


def _compile_verdict(puzzle, source, outcome, payload, timed):
    """None when every launch to come has its binary (the checked configurations go into `outcome["valid"]`),
    else the puzzle's result."""
    if isinstance(outcome, str):
        return {"status": "error", "reason": outcome}
    if "module_raised" in outcome:
        return {"status": "error", "reason": module_stopped_message(source, outcome["module_raised"])}
    valid, problems = validate_configs(puzzle, outcome["configs"], source.params)
    if problems:
        return {"status": "error", "reason": "invalid tuning configuration: " + "; ".join(problems)}
    outcome["valid"] = valid
    try:
        outcome["kept"], outcome["pruned"], outcome["variants"] = _pruning(puzzle, source, outcome, payload, timed)
    except MalformedResult as error:
        return {"status": "error", "reason": f"the compile sandbox's result is malformed: {error}"}
    needed = [f"verify-{c}-{l}{suffix}" for c, case in enumerate(payload) if c not in outcome["pruned"]
              for suffix in ["", *(f"-{v}" for v, ran in enumerate(outcome["variants"][c]) if ran)]
              for l in range(len(case["launches"]))]
    if timed:
        needed += [f"time-{s}-{c}" for s, kept in enumerate(outcome["kept"]) for c in kept]
    missing = [key for key in needed if key not in outcome["compiled"]]
    if not missing:
        return None
    problem = next((outcome["problems"][key] for key in missing if key in outcome["problems"]), None)
    where = ""
    if problem and problem["line"]:
        module = problem["module"] or MAIN
        where = f" at {source.describe_line(problem['line'], module)}: {source.line_text(problem['line'], module)}"
    return {"status": "fail", "reason": f"the GPU compiler rejects the kernel{where}: "
                                        f"{problem['message'] if problem else 'no binary came back'}"}


def _pruning(puzzle, source, outcome, payload, timed):
    """(for each benchmark size, the indices of the configurations timed there; {index: why} of the cases not
    verified; for each case, whether it runs again with each other value the configurations give the kernel's own
    parameters) as the compile sandbox ran the kernel's early_config_prune, checked: only a kernel with a pruner
    keeps configurations off, never all of them at a size, leaves only configuration cases unverified (as the
    CPU check does), each of them said why, and leaves a case's run again out."""
    every = list(range(max(1, len(outcome["valid"]))))
    sizes = len(puzzle.benchmark.sizes) if timed else 0
    kept, pruned, again = outcome.get("kept"), outcome.get("pruned"), outcome.get("variants")
    if not (isinstance(kept, list) and len(kept) == sizes and isinstance(pruned, dict)):
        raise MalformedResult("the configurations kept are not given for each benchmark size")
    if not (isinstance(again, dict) and all(type(index) is int for index in again)
            and sorted(again) == list(range(len(payload))) and all(
            isinstance(runs, list) and len(runs) == len(source.variants) and all(type(ran) is bool for ran in runs)
            and (source.prune is not None or index in pruned or all(runs)) for index, runs in again.items())):
        raise MalformedResult("the runs again with the other configurations' constants are malformed, or left out "
                              "where the kernel has no pruner")
    for indices in kept:
        if not (isinstance(indices, list) and indices and all(type(i) is int and i in every for i in indices)
                and len(set(indices)) == len(indices)):
            raise MalformedResult("the configurations kept at a size are none, or not the kernel's")
        if source.prune is None and indices != every:
            raise MalformedResult("configurations kept off where the kernel has no pruner")
    for index, why in pruned.items():
        if source.prune is None or type(index) is not int or not 0 <= index < len(payload) \
                or not payload[index].get("configuration") or not isinstance(why, str):
            raise MalformedResult("a case not verified that the kernel's pruner cannot keep off")
    return kept, {index: why[:300] for index, why in pruned.items()}, \
        [[ran and index not in pruned for ran in again[index]] for index in range(len(payload))]


def _device(device):
    if not isinstance(device, dict) or not isinstance(device.get("name"), str) or not all(
            isinstance(device.get(k), (int, float)) and math.isfinite(device[k]) and device[k] > 0
            for k in ("copy_bandwidth", "read_bandwidth", "write_bandwidth", "matmul_rate")):
        raise MalformedResult("the device record is malformed")
    return {k: v for k, v in device.items() if isinstance(v, (str, int, float))}


def _judge(puzzle, source, outcome, device, settings, timed=True, pruned=()):
    """The verdict of one puzzle on the GPU: its verification compared with the reference (but for the cases
    `pruned`: configuration cases the kernel's early_config_prune keeps off), and its timings checked, each
    against the physical floor computed here from the course and the device."""
    if not isinstance(outcome, dict) or not isinstance(outcome.get("cases"), list) or \
            not isinstance(outcome.get("timings"), list) or timed and device is None:
        raise MalformedResult("not a timing outcome")
    cases = [make_case(puzzle, i) for i in range(len(puzzle.cases))]
    runs = check_runs(outcome["cases"], cases, ["sequential"] * len(cases), settings,
                      configurations=[source.tuned, *source.variants],
                      pruning=[None if source.prune is None else i in pruned for i in range(len(cases))])
    failures = []
    for index, run in enumerate(runs):
        diagnostics = run_case(puzzle, index, source, run, 0, settings)[0]
        for constants, again in zip(source.variants, run["variants"]):  # with the other configurations' constants
            if diagnostics:
                break
            if again is not None:
                diagnostics = run_case(puzzle, index, source, again, 0, settings, constants)[0]
        failures += diagnostics
    if failures:
        verb = "fails" if failures[0].kind == "kernel_error" else "is wrong"
        return {"status": "fail", "reason": f"{verb} on the GPU in case '{failures[0].case}': {failures[0].message}"}
    if not timed:
        return {"status": "pass"}
    benchmark = puzzle.benchmark
    failed = [t["failed"] for t in outcome["timings"] if isinstance(t, dict) and isinstance(t.get("failed"), str)]
    if failed:
        size = dict(benchmark.sizes[len(outcome["timings"]) - 1])
        return {"status": "fail", "reason": f"the kernel cannot run on the GPU at the benchmark size {size}: "
                                            f"{printable(failed[0][:500], keep=chr(10))}"}
    if len(outcome["timings"]) != len(benchmark.sizes):
        raise MalformedResult("not one timing per benchmark size")
    peak = peaks(device["name"], device)
    itemsize = torch.empty(0, dtype=getattr(torch, benchmark.dtype)).element_size()
    timings = []
    for sizes, timing in zip(benchmark.sizes, outcome["timings"]):
        if not isinstance(timing, dict):
            raise MalformedResult("a timing is not a mapping")
        if "rejected" in timing:
            return {"status": "rejected", "reason": str(timing["rejected"])[:500]}
        kernel, base = _summary(timing.get("kernel")), _summary(timing.get("baseline"))
        namespace = {**sizes, "itemsize": itemsize}
        work = {k: float(e(namespace)) if e is not None else None
                for k, e in (("bytes", benchmark.bytes), ("flops", benchmark.flops))}
        if work["bytes"]:
            work["written_bytes"] = min(work["bytes"], written_bytes(puzzle, sizes))
        floor = floor_seconds(work["bytes"], work["flops"], benchmark.dtype, peak)
        seconds = kernel["median"]
        if seconds < floor:
            return {"status": "rejected", "reason": f"{seconds * 1e6:.1f} us at {dict(sizes)} is below the "
                                                    f"physical floor of {floor * 1e6:.1f} us"}
        config = timing.get("config")
        timings.append({"sizes": dict(sizes), "config": config if isinstance(config, dict) else None,
                        "time_s": seconds, "spread": kernel["spread"], "calls": kernel["calls"],
                        "baseline_time_s": base["median"], "speedup": base["median"] / seconds, **work})
    return {"status": "pass", "timings": timings}


def _summary(summary):
    if not isinstance(summary, dict) or not all(isinstance(summary.get(k), (int, float)) and
                                                math.isfinite(summary[k]) for k in ("median", "spread", "calls")) \
            or summary["median"] <= 0:
        raise MalformedResult("a timing summary is malformed")
    return summary


def written_bytes(puzzle, sizes):
    """The bytes of the puzzle's outputs at these sizes: what a kernel must write."""
    dtype = puzzle.benchmark.dtype
    return sum(math.prod(t.shape_at(sizes)) * torch.empty(0, dtype=getattr(torch, t.dtype or dtype)).element_size()
               for t in puzzle.tensors if t.role == "output")


def rates(result, device):
    """Add GB/s or TFLOP/s and the fraction of the roofline to each timing: this run's matmul rate, or for
    memory-bound work the time its reads take at this run's read bandwidth plus its writes at the write
    bandwidth (a kernel that mostly writes has the write bandwidth as its roofline, not the copy's)."""
    for timing in result.get("timings", []):
        if timing["flops"]:
            timing["tflops"] = timing["flops"] / timing["time_s"] / 1e12
            timing["fraction"] = timing["flops"] / timing["time_s"] / device["matmul_rate"]
        else:
            timing["gbps"] = timing["bytes"] / timing["time_s"] / 1e9
            written = timing["written_bytes"]
            roofline_s = (timing["bytes"] - written) / device["read_bandwidth"] + written / device["write_bandwidth"]
            timing["fraction"] = roofline_s / timing["time_s"]
    return result


def write_results(results, out):
    Path(out).write_text(json.dumps(results, indent=2))
