"""`triton-course inspect`: what the compiler makes of a kernel, on a machine without a GPU.

The kernel is compiled for an NVIDIA target on the CPU, as the compile check does, and its Triton IR,
TritonGPU IR and PTX are shown with what it uses: shared memory and warps from Triton's metadata,
registers and spills from ptxas (`-v`), the assembler that ships with Triton. A puzzle with a GPU
benchmark is compiled as the GPU stage launches it first (its dtype, its first size, the submission's
first tuning configuration or the course's); any other puzzle with its first case's arguments.
"""
import re
import subprocess
import tempfile
from pathlib import Path

from .bench import validate_configs
from ..pipeline.compile_check import benchmark_arguments, compile_arguments, signature
from ..pipeline.diagnose import hint
from ..pipeline.interpret import python_function
from ..pipeline.load import SubmissionError, load_submission
from ..pipeline.worker import import_module, module_name


def inspect_kernel(course, path, puzzle_id, target=90):
    """The report's text; raises SubmissionError when there is no kernel to compile."""
    import warnings

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    puzzle = course.puzzle(puzzle_id)
    loaded = load_submission(path, course, [puzzle_id])[puzzle_id]
    if loaded.status != "found":
        raise SubmissionError(loaded.diagnostics[0].message)
    arguments, options, launch = _launch(puzzle, loaded.source.configs)
    with tempfile.TemporaryDirectory(prefix="triton-course-inspect-") as directory:
        module, _ = import_module(loaded.source.module, directory, module_name(puzzle_id))
        kernel = getattr(module, puzzle.kernel)
        types, constexprs, attrs = signature(python_function(kernel), arguments)
        warnings.simplefilter("ignore")
        try:
            compiled = triton.compile(ASTSource(fn=kernel, signature=types, constexprs=constexprs, attrs=attrs),
                                      target=GPUTarget("cuda", target, 32), options=options)
        except Exception as error:
            message = getattr(error, "error_message", None) or str(error).strip().splitlines()[-1]
            raise SubmissionError(f"the compiler rejects {puzzle.kernel} for sm_{target}: {message}{hint(message)}")
        resources = _ptxas_report(compiled.asm["ptx"], target, Path(directory))
    constants = ", ".join(f"{k}={v}" for k, v in constexprs.items())
    lines = [f"{puzzle.kernel} for sm_{target}, compiled on the CPU ({constants})", f"as {launch}", "",
             "== Resources ==",
             f"shared memory: {compiled.metadata.shared} bytes per program",
             f"warps: {compiled.metadata.num_warps} ({32 * compiled.metadata.num_warps} threads per program)",
             resources, ""]
    for title, key in (("Triton IR", "ttir"), ("TritonGPU IR", "ttgir"), ("PTX", "ptx")):
        lines += [f"== {title} ==", compiled.asm[key].rstrip(), ""]
    return "\n".join(lines)


def _launch(puzzle, configs):
    """(arguments, compile options, what they are in words) of the launch to compile."""
    if puzzle.benchmark is None:
        case = puzzle.cases[0]
        return compile_arguments(puzzle), {}, f"the first case ({case.name}, {case.dtype}) launches it"
    valid, problems = validate_configs(puzzle, configs)
    if problems:
        raise SubmissionError(f"invalid tuning configuration for {puzzle.id}: " + "; ".join(problems))
    benchmark = puzzle.benchmark
    config = benchmark.launch_config(valid[0] if valid else {}, dict(benchmark.sizes[0]))
    options = {k: config[k] for k in ("num_warps", "num_stages") if k in config}
    origin = "the first of its tuning configurations" if valid else "the course's launch configuration"
    settings = [f"{k}={v}" for k, v in benchmark.sizes[0].items()] + [benchmark.dtype]
    settings += [f"{k}={v}" for k, v in options.items()]
    return (benchmark_arguments(puzzle, config), options,
            f"the GPU stage launches it first: {', '.join(settings)} ({origin})")


def _ptxas_report(ptx, target, directory):
    from triton.backends.nvidia.compiler import get_ptxas
    ptxas = get_ptxas(target).path  # the assembler Triton itself uses for this target
    source = directory / "kernel.ptx"
    source.write_text(ptx)
    arch = f"sm_{target}a" if target >= 90 else f"sm_{target}"
    try:
        result = subprocess.run([str(ptxas), f"-arch={arch}", "-v", str(source), "-o", str(directory / "kernel.o")],
                                capture_output=True, text=True, timeout=120)
    except OSError as error:
        return f"registers: unknown (ptxas could not run: {error})"
    used = re.search(r"Used (\d+) registers", result.stderr)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", result.stderr)
    if not used:
        return f"registers: unknown (ptxas said: {result.stderr.strip()[:300]})"
    spill = f", spills: {spills.group(1)} bytes stored, {spills.group(2)} bytes loaded" if spills else ""
    return f"registers: {used.group(1)} per thread{spill} (ptxas -v)"
