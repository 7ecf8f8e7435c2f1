"""`triton-course inspect`: what the compiler makes of a kernel, on a machine without a GPU.

The kernel is compiled for an NVIDIA target in the GPU stage's compile sandbox (the submission's Python runs
nowhere else), and its Triton IR, TritonGPU IR and PTX are shown with what it uses: shared memory and warps
from Triton's metadata, registers and spills from ptxas (`-v`, the assembler that ships with Triton, also run
in the sandbox). A puzzle with a GPU benchmark is compiled as the GPU stage launches it first (its dtype, its
first size, the submission's first tuning configuration or the course's); any other puzzle with its first
case's arguments.
"""
import json
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from .bench import compile_in_sandbox, compile_job
from ..pipeline.configs import validate_configs
from ..pipeline.cases import make_case
from ..pipeline.diagnose import hint
from ..pipeline.grade import module_stopped_message
from ..pipeline.load import SubmissionError, load_submission
from ..pipeline.performance import places, summary
from ..pipeline.protocol import case_payload
from ..settings import DEFAULT


def inspect_kernel(course, path, puzzle_id, target=90, settings=DEFAULT):
    """The report's text; raises SubmissionError when there is no kernel to compile."""
    puzzle = course.puzzle(puzzle_id)
    loaded = load_submission(path, course, [puzzle_id], settings)[puzzle_id]
    if loaded.status != "found":
        raise SubmissionError(loaded.diagnostics[0].message)
    source = loaded.source
    if source.config_problems and puzzle.benchmark is not None:
        raise SubmissionError(f"invalid tuning configuration for {puzzle.id}: " + "; ".join(source.config_problems))
    first_case = [case_payload(puzzle, make_case(puzzle, 0))]
    job = compile_job(puzzle, source, first_case, inspect=True)
    # The estimate grades the kernel in a sandbox of its own: it runs while this one compiles.
    with ThreadPoolExecutor(max_workers=1) as pool:
        performance = pool.submit(_performance, course, path, puzzle, source, settings)
        with tempfile.TemporaryDirectory(prefix="triton-course-inspect-") as scratch:
            outcome = compile_in_sandbox(course, {puzzle.id: job}, target, replace(settings, puzzle_timeout_s=300),
                                         scratch)[puzzle.id]
        estimate = performance.result()
    if isinstance(outcome, str):
        raise SubmissionError(f"{puzzle.kernel} could not be compiled: {outcome}")
    if "module_raised" in outcome:
        raise SubmissionError(f"{puzzle.id}: {module_stopped_message(source, outcome['module_raised'])}")
    valid, problems = validate_configs(puzzle, outcome["configs"], source.params)
    if problems and puzzle.benchmark is not None:
        raise SubmissionError(f"invalid tuning configuration for {puzzle.id}: " + "; ".join(problems))
    if "inspect" not in outcome["compiled"]:
        message = outcome["problems"].get("inspect", {}).get("message", "no binary came back")
        raise SubmissionError(f"the compiler rejects {puzzle.kernel} for sm_{target}: {message}{hint(message)}")
    binary = outcome["compiled"]["inspect"]
    metadata = json.loads(binary["metadata"])
    constants = ", ".join(f"{k}={v}" for k, v in binary["constexprs"].items())
    lines = [f"{puzzle.kernel} for sm_{target}, compiled on the CPU ({constants})", f"as {_launch(puzzle, valid, outcome['inspected'])}", "",
             "== Resources ==",
             f"shared memory: {metadata.get('shared')} bytes per program",
             f"warps: {metadata.get('num_warps')} ({32 * int(metadata.get('num_warps') or 0)} threads per program)",
             _resources(outcome.get("ptxas")), ""]
    lines += estimate
    for title, key in (("Triton IR", "ttir"), ("TritonGPU IR", "ttgir"), ("PTX", "ptx")):
        lines += [f"== {title} ==", binary["asm"].get(key, "").rstrip(), ""]
    return "\n".join(lines)


def _performance(course, path, puzzle, source, settings):
    """The check's estimate of how fast the kernel would run (pipeline/performance.py), as report lines, with each
    of its tuning configurations' where it has several."""
    if puzzle.benchmark is None:
        return []
    from ..pipeline.grade import grade_submission
    result = grade_submission(course, path, [puzzle.id], settings=settings, performance=True).puzzle(puzzle.id)
    if result.performance is None:
        return ["== How fast would it be? ==", f"no estimate: the kernel does not pass the check ({result.status})", ""]
    return ["== How fast would it be? ==", *summary(result.performance), *_traffic(result.performance),
            *_each_configuration(course, puzzle, source, settings, result.performance), ""]


# Each costs a compile at its tiles and its sampled programs' interpretation: about a second of a core for a matmul's.
CONFIGURATIONS_ESTIMATED = 32


def _each_configuration(course, puzzle, source, settings, first):
    """Lines of a table: the estimate at each tuning configuration the GPU stage's autotuner times (Performance.tuning),
    the first's already made (`first`), the others each in a worker of its own, one a core."""
    from ..pipeline.grade import estimate_source
    tuning = first.get("tuning") or []
    if len(tuning) < 2:
        return []
    chosen = tuning[1:CONFIGURATIONS_ESTIMATED]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        estimates = [first, *pool.map(lambda config: estimate_source(puzzle, source, course, settings, config), chosen)]
    fastest = min((e["predicted_s"] for e in estimates if not e["error"]), default=None)
    words = [_configuration_words(config) for config in tuning[:len(estimates)]]
    width = max(len("configuration"), *map(len, words))
    lines = ["", "each tuning configuration the autotuner times at that size (it keeps the fastest on the GPU):",
             f"{'configuration':<{width}}  estimate  bound"]
    for launched, performance in zip(words, estimates):
        if performance["error"]:
            lines.append(f"{launched:<{width}}  no estimate: {performance['error']}")
            continue
        mark = "  <- the fastest estimated" if performance["predicted_s"] == fastest else ""
        lines.append(f"{launched:<{width}}  {performance['predicted_s'] * 1e6:>5.0f} us  {performance['bound']}{mark}")
    if len(tuning) > len(estimates):
        lines.append(f"(the other {len(tuning) - len(estimates)} not estimated: at most {CONFIGURATIONS_ESTIMATED})")
    return lines


def _configuration_words(config):
    """'BLOCK_M=128, BLOCK_N=64, GROUP_M=8, 8 warps, 3 stages' of a configuration in the course's names."""
    return ", ".join([*(f"{k}={v}" for k, v in {**config.get("kwargs", {}), **config.get("constants", {})}.items()),
                      *([f"{config['num_warps']} warps"] if "num_warps" in config else []),
                      *([f"{config['num_stages']} stages"] if "num_stages" in config else [])])


def _traffic(performance):
    """Per load and store: the bytes it moves and how its warp requests coalesce."""
    if performance["error"]:
        return []
    lines = ["", "access  tensor  bytes (whole kernel)  sectors per warp request (fewest)  where"]
    for access in performance["accesses"]:
        sectors = f"{access['sectors_per_request']:.1f} ({access['ideal_per_request']:.1f})"
        lines.append(f"{access['access']:<6}  {access['tensor']:<6}  {access['bytes'] / 1e6:>17.1f} MB  "
                     f"{sectors:<33}  {places([access['line']])}")
    if performance["reductions"]:
        lines += ["", "reduction of  along axis  times a program  warps it spans  where"]
        for reduction in performance["reductions"]:
            shape = "x".join(map(str, reduction["shape"]))
            axis = "all" if reduction["axis"] is None else reduction["axis"]
            lines.append(f"{shape:<12}  {axis!s:<10}  {reduction['executions_per_program']:>15.1f}  "
                         f"{reduction['warps']:>14}  {places([reduction['line']])}")
    occupancy = performance["occupancy"]
    lines.append(f"{occupancy['programs_per_sm']} programs per SM at once (limited by {occupancy['limited_by']}), "
                 f"{performance['programs']} programs in all")
    return lines


def _launch(puzzle, valid, inspected):
    """How the compiled launch is made, in words; `inspected`: the index of the configuration the compile sandbox
    says it compiled (the first its early_config_prune keeps), checked here."""
    index = inspected if type(inspected) is int and 0 <= inspected < len(valid) else 0
    if puzzle.benchmark is None:
        case = puzzle.cases[0]
        return f"the first case ({case.name}, {case.dtype}) launches it"
    benchmark = puzzle.benchmark
    config = benchmark.launch_config(valid[index] if valid else {}, dict(benchmark.sizes[0]))
    options = {k: config[k] for k in ("num_warps", "num_stages") if k in config}
    origin = ("the course's launch configuration" if not valid else "the first of its tuning configurations"
              if index == 0 else f"the first of its tuning configurations its early_config_prune keeps at that "
                                 f"size: number {index + 1} in its list")
    settings = [f"{k}={v}" for k, v in benchmark.sizes[0].items()] + [benchmark.dtype]
    settings += [f"{k}={v}" for k, v in options.items()]
    return f"the GPU stage launches it first: {', '.join(settings)} ({origin})"


def _resources(report):
    """Registers and spills, from the text of `ptxas -v` the sandbox returned."""
    if not isinstance(report, str):
        return "registers: unknown (ptxas did not run)"
    used = re.search(r"Used (\d+) registers", report)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
    if not used:
        return f"registers: unknown (ptxas said: {report.strip()[:300]})"
    spill = f", spills: {spills.group(1)} bytes stored, {spills.group(2)} bytes loaded" if spills else ""
    return f"registers: {used.group(1)} per thread{spill} (ptxas -v)"
