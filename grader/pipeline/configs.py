"""A submission's GPU launch configurations: read in the compile sandbox, checked by the grader.

A submission declares them with `@triton.autotune(configs=[...])` on its kernel or, leaving the kernel as the
interpreter runs it, `GPU_CONFIGS = [triton.Config(...), ...]` beside it (in a file of several puzzles, a dict
from kernel name to such a list). The expression may be any host code the load stage accepts (a list
comprehension over block sizes, say); it is evaluated only in the sandbox, and what comes back is plain data.
So is its `prune_configs_by`'s early_config_prune, which decides which of them each launch of a case runs with.
"""
import contextlib
import copy

from .load.module import CONSTANT_TYPES, typed
from .load.rules import TORCH_CUDA_QUERIES, HostCodeStopped

NUM_WARPS = (1, 2, 4, 8, 16, 32)  # Triton's: up to 1024 threads a program


# A comprehension over tiles, stages and warps gives a hundred configurations easily; the GPU stage compiles and times
# each one.
MOST_CONFIGURATIONS = 1024


def read_configs(expression, namespace, kernel_names, target):
    """[{"kwargs", "num_warps", "num_stages"} or {"error"}] of the configurations `expression` gives when
    evaluated in `namespace` (a kernel's module, sandbox side) for an NVIDIA GPU of compute capability
    `target` (90: an H100), which is what Triton's driver says to code that asks (`is_cuda()`)."""
    import triton

    try:
        value = tuning_configs(expression, namespace, kernel_names, target)
    except Exception as error:
        return [{"error": f"the tuning configurations raise {type(error).__name__}: {error}"}]
    if not isinstance(value, (list, tuple)):
        return [{"error": "the tuning configurations are not a list of triton.Config(...)"}]
    if len(value) > MOST_CONFIGURATIONS:
        return [{"error": f"{len(value)} tuning configurations: the grader takes at most {MOST_CONFIGURATIONS} (the "
                          "GPU stage compiles and times each)"}]
    configs = []
    for config in value:
        if not isinstance(config, triton.Config):
            configs.append({"error": f"{type(config).__name__} is not a triton.Config"})
        elif getattr(config, "pre_hook", None) is not None:
            configs.append({"error": "a triton.Config with a pre_hook runs host code, which the GPU stage does not"})
        else:
            configs.append({"kwargs": dict(config.kwargs), "num_warps": config.num_warps,
                            "num_stages": config.num_stages})
    return configs


def tuning_configs(expression, namespace, kernel_names, target):
    """What `expression` gives, evaluated in `namespace` as read_configs says (raises what it raises): a kernel's
    list of triton.Config, or anything else."""
    with on_the_gpu(target):
        value = eval(compile(expression, "<tuning configurations>", "eval"), namespace)
    if isinstance(value, dict):
        value = next((value[name] for name in kernel_names if name in value), [])
    return value


# The GPU host code is told it runs on, by compute capability, as torch and Triton's driver report it there: the
# GPU stage's H200 (bench/results/gpu-h200-device-properties.md; an H100 has the same SMs, shared memory, registers
# and clock, a 50 MiB L2 and 80 GB), and an A100 SXM 80GB from its datasheet.
TARGET_GPUS = {
    90: {"name": "NVIDIA H200", "major": 9, "minor": 0, "multi_processor_count": 132, "total_memory": 150109880320,
         "L2_cache_size": 62914560, "regs_per_multiprocessor": 65536, "max_threads_per_multi_processor": 2048,
         "max_threads_per_block": 1024, "shared_memory_per_block": 49152, "shared_memory_per_block_optin": 232448,
         "shared_memory_per_multiprocessor": 233472, "warp_size": 32, "clock_rate": 1980000,
         "memory_clock_rate": 3201000, "memory_bus_width": 6016},
    80: {"name": "NVIDIA A100-SXM4-80GB", "major": 8, "minor": 0, "multi_processor_count": 108,
         "total_memory": 85097971712, "L2_cache_size": 41943040, "regs_per_multiprocessor": 65536,
         "max_threads_per_multi_processor": 2048, "max_threads_per_block": 1024, "shared_memory_per_block": 49152,
         "shared_memory_per_block_optin": 166912, "shared_memory_per_multiprocessor": 167936, "warp_size": 32,
         "clock_rate": 1410000, "memory_clock_rate": 1593000, "memory_bus_width": 5120},
}


@contextlib.contextmanager
def on_the_gpu(target):
    """In the block, host code that asks which GPU it runs on (Triton's driver, as Triton's tutorials ask it:
    `triton.runtime.driver.active.get_current_target()`, `.utils.get_device_properties(device)`; or torch.cuda's
    queries, as libraries ask it) is told it runs on one of compute capability `target`: the GPU the sandbox has
    not, and the one its configurations, pruner and heuristics choose for on the GPU stage's machines."""
    import types

    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    gpu = TARGET_GPUS.get(target)
    properties = None if gpu is None else {
        "max_shared_mem": gpu["shared_memory_per_block_optin"], "max_num_regs": gpu["regs_per_multiprocessor"],
        "multiprocessor_count": gpu["multi_processor_count"], "warpSize": gpu["warp_size"],
        "sm_clock_rate": gpu["clock_rate"], "mem_clock_rate": gpu["memory_clock_rate"],
        "mem_bus_width": gpu["memory_bus_width"]}

    def unknown(*args, **kwargs):
        raise RuntimeError(f"the grader knows no GPU of compute capability {target}")

    class TargetDriver:  # the sandbox has no GPU, or not the one compiled for
        @staticmethod
        def get_current_target():
            return GPUTarget("cuda", target, 32)

        @staticmethod
        def get_current_device():
            return 0

        utils = types.SimpleNamespace(get_device_properties=unknown if gpu is None else lambda device: dict(properties))

    answers = {"get_device_properties": lambda device=None: types.SimpleNamespace(**gpu),
               "get_device_capability": lambda device=None: (gpu["major"], gpu["minor"]),
               "current_device": lambda: 0, "device_count": lambda: 1} if gpu is not None else \
        dict.fromkeys(TORCH_CUDA_QUERIES, unknown)
    drivers = triton.runtime.driver
    previous = drivers.__dict__.get("_active")  # `.active` would create a driver, which fails without a GPU
    saved = {name: getattr(torch.cuda, name) for name in TORCH_CUDA_QUERIES}
    drivers.set_active(TargetDriver())
    for name in TORCH_CUDA_QUERIES:
        setattr(torch.cuda, name, answers[name])
    try:
        yield
    finally:
        drivers.set_active(previous)
        for name, value in saved.items():
            setattr(torch.cuda, name, value)


def kernel_pruner(job, modules, target):
    """(the kernel's tuning configurations, as triton.Config for sm_`target`, and its @triton.autotune's
    early_config_prune), or (None, what evaluating them raised), or None where it has no pruner; `modules`: {name:
    the job's loaded module}."""
    import triton

    if job.get("prune") is None:
        return None
    namespace = modules[job["prune"]["configs_module"]].__dict__
    try:
        configs = list(tuning_configs(job["prune"]["configs"], namespace, [job["kernel"]], target))
        by = eval(compile(job["prune"]["by"], "<prune_configs_by>", "eval"), namespace)
        pruner = by.get("early_config_prune") if isinstance(by, dict) else None
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"[:300]
    if not configs or not all(isinstance(config, triton.Config) for config in configs) or not callable(pruner):
        return None
    return configs, pruner


def kept_configurations(pruner, case, params, own):
    """([for each launch of the case, the indices of the kernel's configurations its early_config_prune (`pruner`:
    kernel_pruner's) keeps for that launch], {}), or (None, {"pruned": why the case is not run}) for a
    configuration case whose blocks it keeps off the case's sizes, or (None, {"prune_error": what the pruner
    raised}), or (None, {}) where the kernel has no pruner. `own`: the kernel's parameters beyond the puzzle's
    (a configuration's blocks are the others it gives, whichever of them it gives too).

    On a GPU the autotuner launches only what its pruner keeps for each launch's arguments (Triton's
    Autotuner.prune_configs), so the cases run only those: a configuration kept off a size may be wrong there. The
    cases run at their own blocks (a configuration case at its configuration's), so the pruner is asked of each
    configuration at those blocks. A pruner that raises here (one asking for the GPU's properties) prunes nothing,
    as without one; one whose augmented assignment would change an object in place raises ChangedInPlace, and one
    that returns a configuration not among the kernel's UnlistedConfiguration."""
    import triton

    if pruner is None:
        return None, {}
    configs, prune = pruner
    if configs is None:
        return None, {"prune_error": prune}
    kept_by_launch = []
    for launch in case["launches"]:
        given = dict(zip(params, launch["args"]))

        def blocks(config):
            return {name: value for name, value in config.kwargs.items() if name not in own}
        if case.get("configuration"):  # the kernel's configurations whose blocks the case runs at
            asked = configs
            matching = [i for i, config in enumerate(configs)
                        if all(given.get(n) == v for n, v in blocks(config).items())]
        else:
            asked = [triton.Config({**config.kwargs, **{n: given[n] for n in blocks(config) if n in given}},
                                   num_warps=config.num_warps, num_stages=config.num_stages) for config in configs]
            matching = list(range(len(configs)))
        try:
            kept = [index for index in kept_indices((asked, prune), params, launch["args"], configs)
                    if index in matching]
        except HostCodeStopped:  # on a GPU it would change a launch's tensor, keep state, or launch blocks no case ran
            raise
        except Exception as error:
            return None, {"prune_error": f"{type(error).__name__}: {error}"[:300]}
        if not kept and case.get("configuration") and matching:
            shown = ", ".join(f"{n}={v!r}" for n, v in blocks(configs[matching[0]]).items())
            return None, {"pruned": f"the kernel's early_config_prune keeps {shown} off this case's sizes"}
        kept_by_launch.append(kept or matching)
    return kept_by_launch, {}


def case_runs(kept, constants, given, launches):
    """(for each of a case's `launches`, the kernel's own constants it runs with first; for each other of
    `constants`, those each launch runs with again, or None where that is the first run), as the autotuner may
    launch any configuration the kernel's early_config_prune keeps for a launch: first with the first of
    `constants` a kept configuration gives, and again with each other where one gives it (the first elsewhere).
    `kept`: kept_configurations' indices, or None (every configuration); `constants`: the values the tuning
    configurations give the kernel's own parameters, the first configuration's first (the load stage's tuned, then
    its variants); `given`: each configuration's own constants, in order."""
    names = list(dict.fromkeys(name for values in constants for name in values))
    # The first of `constants` is {} where a @triton.heuristics above the autotuner sees the first configuration's
    # values as the kernel's defaults.
    firsts = {name: given[0].get(name) for name in names} if given else {}
    kept_constants = [[values for values in constants if any(
        typed({name: given[i].get(name) for name in names}) == typed({**firsts, **values}) for i in indices)]
        or constants for indices in kept] if kept is not None else [constants] * launches

    def among(values, others):
        return any(typed(values) == typed(other) for other in others)
    first = [next(values for values in constants if among(values, launch_kept)) for launch_kept in kept_constants]
    again = [[values if among(values, launch_kept) else launch_first for launch_kept, launch_first in
              zip(kept_constants, first)] for values in constants[1:]]
    return first, [None if [typed(v) for v in launches] == [typed(v) for v in first] else launches
                   for launches in again]


def launched_constants(kernel, configurations):
    """Each of `configurations` ({name: value} of the constants it gives) as a launch with it binds the kernel's
    parameters: completed with the kernel's defaults for those it leaves out."""
    from .interpret import python_function

    fn = python_function(kernel)
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    defaults = {name: plain_constant(default)
                for name, default in zip(params[len(params) - len(fn.__defaults__ or ()):], fn.__defaults__ or ())}
    return [{**defaults, **configuration} for configuration in configurations]


def plain_constant(value):
    """A kernel's constant as a plain value: a default written tl.constexpr(True) is True (what a launch binds, and
    what crosses a sandbox's boundary as data)."""
    import triton.language as tl

    return value.value if isinstance(value, tl.constexpr) else value


class UnlistedConfiguration(HostCodeStopped):
    """A kernel's early_config_prune returned a triton.Config with constants none of its configurations has."""


def kept_indices(pruner, params, args, listed=None):
    """The indices, in the kernel's configurations, of those its early_config_prune (`pruner`: kernel_pruner's) keeps
    for a launch with `args` (by position), called as Triton's Autotuner.prune_configs calls it, with the
    tensors' sizes, strides and dtypes but not their values (as a heuristic sees them); raises what it raises, or
    TypeError where what it returns is no list of some of them. `listed`: the kernel's configurations as it lists
    them, where the pruner is given others (a case's blocks in place of theirs), in the same order: a pruner may
    return one of those it holds itself (a module's list)."""
    import triton

    from .interpret import sizes_only

    configs, prune = pruner
    configured = {name for config in configs for name in config.kwargs}
    # The arguments a GPU launch of an autotuned kernel passes: none of those its configurations give.
    named = sizes_only({name: value for name, value in zip(params, args) if name not in configured})
    copies = copy.deepcopy(configs)
    kept = prune(copies, named)

    def index(config):
        """One of the copies it was given (configurations may differ in their warps or stages alone), else the
        first configuration with the same constants, warps and stages, else with the same constants (a new
        triton.Config the pruner made)."""
        for i, given in enumerate(copies):
            if config is given:
                return i
        if isinstance(config, triton.Config):
            for candidates in (configs, listed or ()):
                alike = [i for i, other in enumerate(candidates) if config.kwargs == other.kwargs]
                launched_alike = [i for i in alike if (config.num_warps, config.num_stages) ==
                                  (candidates[i].num_warps, candidates[i].num_stages)]
                if alike:
                    return (launched_alike or alike)[0]
            raise UnlistedConfiguration(
                f"it returned triton.Config({config.kwargs}, num_warps={config.num_warps}, num_stages="
                f"{config.num_stages}), which is not among the kernel's tuning configurations: on a GPU the autotuner "
                "would launch it, with blocks no case ran at (and the GPU stage times only those listed). List it "
                "among the configurations, and have the pruner return some of those it is given")
        raise TypeError("it returned what is not one of the kernel's tuning configurations")
    if not isinstance(kept, (list, tuple)) or not kept:
        raise TypeError("it returned no list of the configurations it keeps (Triton needs at least one)")
    return list(dict.fromkeys(index(config) for config in kept))


def validate_configs(puzzle, configs, params):
    """The configurations checked against the puzzle (grader side): (valid, problems); [] when none declared.
    A configuration names the kernel's parameters as the submission does (`params`, in order); the valid ones
    come back with the puzzle's blocks in the course's names, matched by position, as every launch binds them, and
    the kernel's own parameters beyond the puzzle's in "constants", in its names."""
    problems, valid = [], []
    course_name = dict(zip(params, puzzle.args))
    student_name = {course: own for own, course in course_name.items()}
    # The kernel's parameters beyond the puzzle's go apart, in its own names ("constants"): the cases run with the
    # value each configuration gives them (load.KernelSource.variants), the GPU stage compiles each with its own.
    own = set(params[len(puzzle.args):])
    configurable = ", ".join(_named(student_name.get(block, block), block) for block in puzzle.blocks)
    for config in configs or []:
        if not isinstance(config, dict):
            problems.append("a configuration is not a mapping")
        elif "error" in config:
            problems.append(str(config["error"])[:300])
        elif set(config) - {"kwargs", "num_warps", "num_stages"} or not isinstance(config.get("kwargs"), dict):
            problems.append("a configuration has unknown fields")
        elif any(course_name.get(name) not in puzzle.blocks for name in config["kwargs"] if name not in own):
            name = next(name for name in config["kwargs"] if course_name.get(name) not in puzzle.blocks)
            what = f"{name!r} is not a parameter of the kernel" if name not in course_name else \
                f"{_named(name, course_name[name])} is not one of the puzzle's block sizes"
            problems.append(f"{_shown(config)}: {what}; the configurable parameters are {configurable}")
        elif any(type(v) is not int or v < 1 or v & (v - 1) or v > 2 ** 16
                 for name, v in config["kwargs"].items() if name not in own):
            problems.append(f"{_shown(config)}: block sizes are powers of 2 up to 65536")
        elif any(type(v) not in CONSTANT_TYPES or type(v) is str and len(v) > 100
                 for name, v in config["kwargs"].items() if name in own):
            problems.append(f"{_shown(config)}: the kernel's own parameters take numbers, booleans or short strings")
        elif config.get("num_warps", 4) not in NUM_WARPS:
            problems.append(f"{_shown(config)}: num_warps is one of {NUM_WARPS}")
        elif type(config.get("num_stages", 3)) is not int or not 1 <= config.get("num_stages", 3) <= 8:
            problems.append(f"{_shown(config)}: num_stages is between 1 and 8")
        else:
            valid.append({**config, "kwargs": {course_name[name]: v for name, v in config["kwargs"].items()
                                               if name not in own},
                          "constants": {name: v for name, v in config["kwargs"].items() if name in own}})
    return valid, problems


def _named(own, course):
    """'BM (the course's BLOCK_M)', or 'BLOCK_M' when the submission names it as the course does."""
    return own if own == course else f"{own} (the course's {course})"


def _shown(config):
    return repr(config)[:300]
