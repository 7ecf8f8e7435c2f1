"""The GPU stage's compile sandbox: the only place the GPU stage runs any of a submission's Python.

`python -m grader.gpu.compile_worker REQUEST RESULTS`, started by sandbox.run_worker, executes each job's
rebuilt modules (with the same restricted builtins and imports as the CPU worker), reads its tuning
configurations, and compiles its kernel for the GPU's architecture for every launch the grader will make:
each verification launch (its pointers' alignment and its sizes specialised as a launch specialises them)
and each benchmark size with each configuration. Heuristics, constexpr functions and the kernel's
early_config_prune (which configurations each launch runs with, as Triton's autotuner asks it) run here. What it
writes back is data (compiled.py): metadata, binaries, signatures, plain values, the indices of the
configurations kept.
"""
import sys
import warnings
from pathlib import Path

import torch

from ..course import load_course
from ..pipeline.compile_check import (benchmark_arguments, compile_kernel, describe, host_code_refusal,
                                      key_the_compile_cache_by_version)
from ..pipeline.interpret import FLOAT32_DOT, bind_arguments, python_function, with_constants
from ..pipeline.load.module import MAIN, typed
from ..pipeline.load.rules import HostCodeStopped
from ..pipeline.worker import KernelModules, host_code_stopped, module_stopped, restrict_the_compilers_builtins
from . import compiled
from ..pipeline.configs import (case_runs, kept_configurations, kept_indices, kernel_pruner, launched_constants,
                                on_the_gpu, read_configs, validate_configs)


def compile_puzzle(job, course, target, directory):
    with on_the_gpu(target):  # a sandbox without the GPU: the kernel's host code is told which one it is for
        return _compile_puzzle(job, course, target, directory)


def _compile_puzzle(job, course, target, directory):
    puzzle = course.puzzle(job["puzzle"])
    modules = KernelModules(job["modules"], directory, f"gpu_{job['id']}", job["kernel"],
                            job.get("unseen_by_heuristics", ()))
    stopped = module_stopped(modules, job)
    if stopped is not None:
        return {"module_raised": stopped}
    try:
        return _compile_launches(job, puzzle, modules, target, directory)
    except HostCodeStopped as error:  # the kernel's pruner, asked which configurations a launch runs with
        return {"module_raised": host_code_stopped(error, modules)}
    except _HelperRefused as refused:  # as the CPU check's interpretation stops there: not the compiler's rejection
        return {"module_raised": host_code_stopped(refused.refusal, modules,
                                                  "a @triton.constexpr_function it calls, run as it compiled")}


class _HelperRefused(Exception):
    def __init__(self, refusal):
        super().__init__(str(refusal))
        self.refusal = refusal


def _compile_launches(job, puzzle, modules, target, directory):
    kernel = getattr(modules.loaded[MAIN], job["kernel"])
    params = list(python_function(kernel).__code__.co_varnames[:python_function(kernel).__code__.co_argcount])
    configs = []
    if job["configs"] is not None:
        configs = read_configs(job["configs"], modules.loaded[job["configs_module"]].__dict__,
                               [job["kernel"], puzzle.kernel], target)
    valid, problems = validate_configs(puzzle, configs, params)
    result = {"configs": configs, "compiled": {}, "problems": {}, "kept": [], "pruned": {}, "variants": {}}
    # Which configurations each launch runs with, as Triton's autotuner asks the kernel's early_config_prune; one
    # whose configurations the grader would not take is not asked (the grader refuses them).
    pruner = kernel_pruner(job, modules.loaded, target)
    if pruner is not None and (problems or pruner[0] is not None and len(pruner[0]) != len(valid)):
        pruner = None
    own = params[len(puzzle.args):]
    every = list(range(len(valid))) or [0]

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
            refusal = host_code_refusal(error)
            if refusal is not None:
                raise _HelperRefused(refusal) from None
            message, module, line = describe(error, modules)
            result["problems"][key] = {"message": message, "module": module, "line": line}

    def timed_at(sizes):
        """The indices of the configurations the autotuner times at the benchmark's `sizes`: those the pruner keeps
        there (all where it raises, as on the CPU)."""
        if pruner is None or pruner[0] is None:
            return every
        launch = puzzle.benchmark.launch_config(valid[0], dict(sizes))
        try:
            return kept_indices(pruner, params, benchmark_arguments(puzzle, launch, sizes))
        except HostCodeStopped:
            raise
        except Exception:
            return every

    def configured_launch(index, sizes=None):
        """(a launch's configuration: the benchmark's completed with the `index`th valid one, its constants)."""
        config = valid[index] if valid else {}
        if puzzle.benchmark is None:
            return {}, config.get("constants")
        return puzzle.benchmark.launch_config(config, dict(sizes or puzzle.benchmark.sizes[0])), config.get("constants")

    if job.get("inspect"):  # with the configuration `inspected`, which the report names
        if puzzle.benchmark is None:  # as its first case launches it
            kept, _ = kept_configurations(pruner, job["verification"][0], params, own)
            result["inspected"] = kept[0][0] if kept and kept[0] else 0
            build("inspect", job["verification"][0]["launches"][0]["args"], {}, views=True,
                  constants=configured_launch(result["inspected"])[1])
        else:  # as the autotuner launches it first at the benchmark's first size
            result["inspected"] = timed_at(puzzle.benchmark.sizes[0])[0]
            first, constants = configured_launch(result["inspected"])
            build("inspect", benchmark_arguments(puzzle, first, puzzle.benchmark.sizes[0]), first,
                  constants=constants)
        if "inspect" in result["compiled"]:
            result["ptxas"] = ptxas_report(result["compiled"]["inspect"]["asm"]["ptx"], target, directory)
        return result
    # Each launch of a case as the CPU check runs it (configs.case_runs), with the first configuration the pruner
    # keeps for it that gives those constants; a configuration case whose blocks the pruner keeps off its sizes is
    # not compiled: the autotuner never launches them there, and the CPU check does not run it either.
    given = launched_constants(kernel, [config["constants"] for config in valid])
    constant_sets = [job["tuned"], *job["variants"]]
    firsts = {name: given[0].get(name) for values in constant_sets for name in values} if given else {}
    for case_index, case in enumerate(job["verification"]):
        kept, pruning = kept_configurations(pruner, case, params, own)
        result["variants"][case_index] = [False] * len(job["variants"])
        if "pruned" in pruning:
            result["pruned"][case_index] = pruning["pruned"]
            continue
        first, with_others = case_runs(kept, constant_sets, given, len(case["launches"]))
        runs = [("", first)] + [(f"-{v}", launches) for v, launches in enumerate(with_others) if launches is not None]
        result["variants"][case_index] = [launches is not None for launches in with_others]
        for suffix, launches in runs:
            for launch_index, (launch, values) in enumerate(zip(case["launches"], launches)):
                wanted, indices = {**firsts, **values}, (kept[launch_index] if kept else None) or every
                index = next((i for i in indices if given and
                              typed({name: given[i].get(name) for name in wanted}) == typed(wanted)), indices[0])
                config, constants = configured_launch(index)
                build(f"verify-{case_index}-{launch_index}{suffix}", launch["args"], config, views=True,
                      constants=constants)
    if not job["timed"]:
        return result
    for size_index, sizes in enumerate(puzzle.benchmark.sizes):
        result["kept"].append(timed_at(sizes))
        for config_index in result["kept"][-1]:
            launch, constants = configured_launch(config_index, sizes)
            build(f"time-{size_index}-{config_index}", benchmark_arguments(puzzle, launch, sizes), launch,
                  constants=constants)
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
