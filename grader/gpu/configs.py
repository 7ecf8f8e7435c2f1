"""A submission's GPU launch configurations: read in the compile sandbox, checked by the grader.

A submission declares them with `@triton.autotune(configs=[...])` on its kernel or, leaving the kernel as the
interpreter runs it, `GPU_CONFIGS = [triton.Config(...), ...]` beside it (in a file of several puzzles, a dict
from kernel name to such a list). The expression may be any host code the load stage accepts (a list
comprehension over block sizes, say); it is evaluated only in the sandbox, and what comes back is plain data.
"""
NUM_WARPS = (1, 2, 4, 8, 16)


def read_configs(expression, namespace, kernel_names):
    """[{"kwargs", "num_warps", "num_stages"} or {"error"}] of the configurations `expression` gives when
    evaluated in `namespace` (a kernel's module, sandbox side)."""
    import triton

    try:
        value = eval(compile(expression, "<tuning configurations>", "eval"), namespace)
    except Exception as error:
        return [{"error": f"the tuning configurations raise {type(error).__name__}: {error}"}]
    if isinstance(value, dict):
        value = next((value[name] for name in kernel_names if name in value), [])
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


def validate_configs(puzzle, configs):
    """The configurations checked against the puzzle (grader side): (valid, problems); [] when none declared."""
    problems, valid = [], []
    for config in configs or []:
        if not isinstance(config, dict):
            problems.append("a configuration is not a mapping")
        elif "error" in config:
            problems.append(str(config["error"])[:300])
        elif set(config) - {"kwargs", "num_warps", "num_stages"} or not isinstance(config.get("kwargs"), dict):
            problems.append("a configuration has unknown fields")
        elif set(config["kwargs"]) - set(puzzle.blocks):
            problems.append(f"{_shown(config)}: the configurable parameters are {', '.join(puzzle.blocks)}")
        elif any(type(v) is not int or v < 1 or v & (v - 1) or v > 2 ** 16 for v in config["kwargs"].values()):
            problems.append(f"{_shown(config)}: block sizes are powers of 2 up to 65536")
        elif config.get("num_warps", 4) not in NUM_WARPS:
            problems.append(f"{_shown(config)}: num_warps is one of {NUM_WARPS}")
        elif type(config.get("num_stages", 3)) is not int or not 1 <= config.get("num_stages", 3) <= 8:
            problems.append(f"{_shown(config)}: num_stages is between 1 and 8")
        else:
            valid.append(config)
    return valid, problems


def _shown(config):
    return repr(config)[:300]
