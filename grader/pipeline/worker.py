"""The sandboxed side of grading: compile, then interpret, a submission's kernels on the cases it is given.

The grader's process makes the cases and keeps the reference; it sends this worker only the kernel modules
(see load.KernelSource), the input tensors and the launch plans, and gets back the memory the kernels left
behind, which it compares itself. `python -m grader.pipeline.worker REQUEST RESULTS` reads REQUEST (torch.save'd),
and writes one file per puzzle into RESULTS as soon as that puzzle is done, so that a worker that dies or
hangs on one puzzle has still delivered the ones before it.

A kernel must compile for the GPU before it is interpreted: the compiler rejects anything that is not
Triton (imports, calls into torch, os or the grader), so what runs here is kernel code and nothing else.
"""
import importlib.util
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

from .cases import Buffer
from .compile_check import compile_problems
from ..course import TensorSpec
from .interpret import KernelCrashed, interpreting, launch, python_function
from .memcheck import MemoryChecker, OutOfBounds, Region


def import_module(source, directory, name):
    """Import a kernel module from its source text (Triton reads kernels' source from a real file)."""
    path = Path(directory) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton looks kernels' modules up by name
    spec.loader.exec_module(module)
    return module, path


def module_name(key):
    """A module name for a job's kernel module (job keys may hold any character)."""
    return "kernel_" + re.sub(r"\W", "_", key)


def run_puzzle(job, directory):
    """Compile the job's kernel; if it compiles, run every case. Returns plain data (tensors, numbers, strings)."""
    module, path = import_module(job["module"], directory, module_name(job["id"]))
    problems = compile_problems(path, job["kernel"], job["arguments"], job["targets"])
    if problems:
        return {"compile": problems, "cases": []}
    fn = python_function(getattr(module, job["kernel"]))
    cases = []
    with interpreting():
        for case in job["cases"]:
            cases.append({"runs": [_run(fn, case, order) for order in case["orders"]]})
            (Path(directory) / f"{job['id']}.progress").write_text(str(len(cases)))  # read by the grader
    return {"compile": [], "cases": cases}


def _run(fn, case, order):
    """One run of a case: fresh copies of its tensors, the launches in order, what memory looks like after."""
    copies = _copy_case(case)
    buffers = {}
    for name, tensor in copies["buffers"].items():
        parent, views = tensor["parent"], tensor["views"]
        index = torch.arange(parent.numel())
        positions = [index.as_strided(v.shape, v.stride(), v.storage_offset()) for v in views]
        buffers[name] = Buffer(TensorSpec(name, (), "input", False), parent, views, positions,
                               writers=np.full(parent.numel(), -1, dtype=np.int64),
                               readers=np.full(parent.numel(), -1, dtype=np.int64))
    error, printed = None, ""
    for launch_index, plan in enumerate(copies["launches"]):
        regions = {param: Region(buffers[name], index, param) for param, (name, index) in plan["regions"].items()}
        programs = [tuple(p) for p in plan[order]]
        try:
            output = launch(fn, plan["args"], tuple(plan["grid"]), programs,
                            MemoryChecker(regions, launch_index, tuple(plan["grid"]), plan["dims"]))
            printed += output.printed
        except OutOfBounds as violation:
            error = {"kind": "out_of_bounds", "message": violation.message(), "tensor": violation.tensor,
                     "access": violation.access, "program": list(violation.program),
                     "offsets": [float(o) for o in violation.offsets[:4096]], "launch": launch_index}
        except KernelCrashed as crash:
            kind = "out_of_memory" if isinstance(crash.error, MemoryError) else "kernel_error"
            error = {"kind": kind, "message": f"{type(crash.error).__name__}: {crash.error}", "line": crash.line,
                     "program": list(crash.program)}
        if error:
            break
    return {"order": order, "error": error, "printed": printed,
            "parents": {name: b.parent for name, b in buffers.items()},
            "writers": {name: torch.from_numpy(b.writers) for name, b in buffers.items()},
            "readers": {name: torch.from_numpy(b.readers) for name, b in buffers.items()},
            "race": {name: list(b.race) for name, b in buffers.items() if b.race is not None},
            "loads": {name: b.loads for name, b in buffers.items()}}


def _copy_case(case):
    """Deep copy of a case's tensors that keeps the views sharing their parents' storage."""
    copies = {"buffers": {}, "launches": []}
    moved = {}
    for name, tensor in case["buffers"].items():
        parent = tensor["parent"].clone()
        moved[tensor["parent"].untyped_storage().data_ptr()] = parent
        copies["buffers"][name] = {"parent": parent, "views": [
            parent.as_strided(v.shape, v.stride(), v.storage_offset()) for v in tensor["views"]]}
    for plan in case["launches"]:
        args = [moved[a.untyped_storage().data_ptr()].as_strided(a.shape, a.stride(), a.storage_offset())
                if isinstance(a, torch.Tensor) else a for a in plan["args"]]
        copies["launches"].append({**plan, "args": args})
    return copies


def main(request_path, results):
    warnings.simplefilter("ignore")  # Triton's notices are noise in a student's report
    request = torch.load(request_path, weights_only=True)
    results = Path(results)
    for job in request["puzzles"]:
        (results / f"{job['id']}.started").touch()
        outcome = run_puzzle(job, results)
        torch.save(outcome, results / f"{job['id']}.partial")
        (results / f"{job['id']}.partial").rename(results / f"{job['id']}.pt")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
