"""A submission's GPU launch configurations: read in the compile sandbox, checked by the grader.

A submission declares them with `@triton.autotune(configs=[...])` on its kernel or, leaving the kernel as the
interpreter runs it, `GPU_CONFIGS = [triton.Config(...), ...]` beside it (in a file of several puzzles, a dict
from kernel name to such a list). The expression may be any host code the load stage accepts (a list
comprehension over block sizes, say); it is evaluated only in the sandbox, and what comes back is plain data.
"""
from .load.module import CONSTANT_TYPES

NUM_WARPS = (1, 2, 4, 8, 16, 32)  # Triton's: up to 1024 threads a program


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
    import triton
    from triton.backends.compiler import GPUTarget

    class TargetDriver:  # the sandbox has no GPU, or not the one compiled for
        @staticmethod
        def get_current_target():
            return GPUTarget("cuda", target, 32)

    drivers = triton.runtime.driver
    previous = drivers.__dict__.get("_active")  # `.active` would create a driver, which fails without a GPU
    drivers.set_active(TargetDriver())
    try:
        value = eval(compile(expression, "<tuning configurations>", "eval"), namespace)
    finally:
        drivers.set_active(previous)
    if isinstance(value, dict):
        value = next((value[name] for name in kernel_names if name in value), [])
    return value


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
