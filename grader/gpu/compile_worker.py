"""The GPU stage's compile sandbox: the only place the GPU stage runs any of a submission's Python.

`python -m grader.gpu.compile_worker REQUEST RESULTS`, started by sandbox.run_worker, executes each job's
rebuilt modules (with the same restricted builtins and imports as the CPU worker), reads its tuning
configurations, and compiles its kernel for the GPU's architecture for every launch the grader will make:
each verification launch (its pointers' alignment and its sizes specialised as a launch specialises them)
and each benchmark size with each configuration. Heuristics and constexpr functions run here, at compile
time. What it writes back is data (compiled.py): metadata, binaries, signatures, plain values.
"""
import sys
import warnings
from pathlib import Path

import torch

from ..course import load_course
from ..pipeline.compile_check import (benchmark_arguments, compile_kernel, describe,
                                      key_the_compile_cache_by_version)
from ..pipeline.interpret import FLOAT32_DOT, bind_arguments, python_function, with_constants
from ..pipeline.worker import KernelModules, restrict_the_compilers_builtins
from . import compiled
from ..pipeline.configs import read_configs, validate_configs



def compile_puzzle(job, course, target, directory):
    puzzle = course.puzzle(job["puzzle"])
    modules = KernelModules(job["modules"], directory, f"gpu_{job['id']}")
    kernel = getattr(modules.load(), job["kernel"])
    params = list(python_function(kernel).__code__.co_varnames[:python_function(kernel).__code__.co_argcount])
    configs = []
    if job["configs"] is not None:
        configs = read_configs(job["configs"], modules.loaded[job["configs_module"]].__dict__,
                               [job["kernel"], puzzle.kernel], target)
    valid, _ = validate_configs(puzzle, configs, params)
    result = {"configs": configs, "compiled": {}, "problems": {}}

    def build(key, args, config, views=False, constants=None):
        """Compile one launch; `views`: its pointers are the cases' views, aligned as their storage offsets say;
        `constants`: the kernel's own parameters as the configuration gives them."""
        options = {k: config[k] for k in ("num_warps", "num_stages") if k in config}
        try:
            args = with_constants(kernel, args, constants)
            bind_arguments(kernel, args, options=options)  # a heuristic's launch options win over the configuration's
            aligned = _alignment(kernel, args) if views else (lambda param: True)
            kernel_binary, constexprs = compile_kernel(kernel, args, target, options, aligned)
            result["compiled"][key] = compiled.from_compile(kernel_binary, params, bind_arguments(kernel, args),
                                                            constexprs)
        except Exception as error:
            message, module, line = describe(error, modules)
            result["problems"][key] = {"message": message, "module": module, "line": line}

    # The first configuration's constants go with every launch but the timed ones, as Triton's autotuner gives
    # them (a heuristic may read them).
    constants = valid[0].get("constants") if valid else None
    if job.get("inspect"):
        if puzzle.benchmark is None:  # as its first case launches it
            build("inspect", job["verification"][0][0], {}, views=True, constants=constants)
        else:
            first = puzzle.benchmark.launch_config(valid[0] if valid else {}, dict(puzzle.benchmark.sizes[0]))
            build("inspect", benchmark_arguments(puzzle, first, puzzle.benchmark.sizes[0]), first,
                  constants=constants)
        if "inspect" in result["compiled"]:
            result["ptxas"] = ptxas_report(result["compiled"]["inspect"]["asm"]["ptx"], target, directory)
        return result
    first = {} if puzzle.benchmark is None else \
        puzzle.benchmark.launch_config(valid[0] if valid else {}, dict(puzzle.benchmark.sizes[0]))
    for case_index, case in enumerate(job["verification"]):
        for launch_index, args in enumerate(case):
            build(f"verify-{case_index}-{launch_index}", args, first, views=True, constants=constants)
    if not job["timed"]:
        return result
    for size_index, sizes in enumerate(puzzle.benchmark.sizes):
        for config_index, config in enumerate(valid or [{}]):
            launch = puzzle.benchmark.launch_config(config, dict(sizes))
            build(f"time-{size_index}-{config_index}", benchmark_arguments(puzzle, launch, sizes), launch,
                  constants=config.get("constants"))
    return result


def _alignment(kernel, args):
    """Which pointer parameters a launch on these views would find 16-byte aligned: a moved storage starts
    aligned, so a view is aligned when its storage offset is a multiple of 16 bytes."""
    bound = bind_arguments(kernel, args)
    aligned = {name for name, value in bound.items() if isinstance(value, torch.Tensor)
               and value.storage_offset() * value.element_size() % 16 == 0}
    return lambda param: param in aligned


def ptxas_report(ptx, target, directory):
    """What `ptxas -v` says of `ptx`: Triton's own assembler for this target, run here, on the sandbox's side."""
    import subprocess

    from triton.backends.nvidia.compiler import get_ptxas
    ptxas = get_ptxas(target).path
    source = Path(directory) / "inspected.ptx"
    source.write_text(ptx)
    arch = f"sm_{target}a" if target >= 90 else f"sm_{target}"
    try:
        result = subprocess.run([str(ptxas), f"-arch={arch}", "-v", str(source), "-o",
                                 str(Path(directory) / "inspected.o")], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as error:
        return f"ptxas could not run: {error}"
    return result.stderr[-4000:]


def main(request_path, results):
    from triton import knobs
    warnings.simplefilter("ignore")
    key_the_compile_cache_by_version()
    restrict_the_compilers_builtins()
    knobs.language.fp32_default = FLOAT32_DOT  # as the CPU stage interprets tl.dot (interpret.py)
    request = torch.load(request_path, weights_only=True)
    course = load_course(request["course_path"], text=request["course"])
    results = Path(results)
    for job in request["puzzles"]:
        (results / f"{job['id']}.started").touch()
        outcome = compile_puzzle(job, course, request["target"], results)
        torch.save(outcome, results / f"{job['id']}.partial")
        (results / f"{job['id']}.partial").rename(results / f"{job['id']}.pt")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
