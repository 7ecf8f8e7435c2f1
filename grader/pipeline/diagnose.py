"""Explain a puzzle's failures across its cases: what the passing and failing cases have in common, and how to
launch a failing one again to step through it."""
import re

from ..course import LAYOUTS, configuration_case_base
from .load.rules import BLOCK_POINTERS_GONE
from .memcheck import program_name
from .results import Diagnostic

# Messages from Triton (interpreter or compiler) that students meet, and what to do about them.
HINTS = (
    ("unsupported AST node type: Import", "Imports are not allowed inside a kernel: import at the top of the file."),
    ("Unsupported function referenced", "A kernel can only call triton.language functions and other @triton.jit "
                                        "functions; torch, numpy and math run on the host, not in the kernel."),
    ("arange's arguments must be of type tl.constexpr", "Declare the block size as a compile-time constant: "
                                                        "BLOCK_SIZE: tl.constexpr."),
    ("arange's range must be a power of 2", "Block sizes must be powers of 2: round up and mask the extra lanes."),
    ("Input shapes should have", "tl.dot needs blocks of at least 16 along K (and 16 x 16 tiles to use tensor "
                                 "cores) on the GPU."),
    ("is not defined", "A kernel can only use triton.language, other @triton.jit functions and constants: the "
                       "grader keeps only those (and the triton and math imports) from your file. torch, numpy "
                       "and your other Python code run on the host, not in the kernel."),
    ("unsupported AST node type: Raise", "This is still the skeleton: replace `raise NotImplementedError()` with "
                                         "your kernel."),
    ("cannot be combined with modifier", "cache_modifier and eviction_policy both tell a load how to use the "
                                         "caches, and ptxas accepts only some pairs: keep one of the two."),
    ("Block pointers have been removed", BLOCK_POINTERS_GONE + "."),
    ("on meta tensors", "A heuristic sees each tensor's shape, strides and dtype, not its values: choose blocks "
                        "and flags from sizes."),
    ("Cannot copy out of meta tensor", "A heuristic sees each tensor's shape, strides and dtype, not its values: "
                                       "choose blocks and flags from sizes."),
    ("'int' object has no attribute", "Triton passes an int argument equal to 1 (a stride or a size of 1) to the "
                                      "kernel as a plain constant, and a tl.static_range loop's variable is one "
                                      "too, without a tensor's methods (a range loop's variable has .to() and "
                                      ".dtype alone): convert it with tl.cast(value, tl.int64), or list the "
                                      "parameter in @triton.jit(do_not_specialize=[...])."),
    ("inline_asm not supported in interpreter mode", "The grader runs kernels in Triton's interpreter on the CPU, "
                                                     "which cannot run PTX: tl.inline_asm_elementwise cannot be "
                                                     "checked here. Write the operation with triton.language "
                                                     "(tl.exp2, tl.math, tl.extra.cuda.libdevice)."),
    ("Did you forget to add @triton.jit", "A kernel calls triton.language functions and @triton.jit functions "
                                          "only: a plain Python function (triton.cdiv, triton.next_power_of_2, a "
                                          "helper without @triton.jit) is host code. In a kernel use tl.cdiv, pass "
                                          "what the host computes as an argument, or decorate the helper with "
                                          "@triton.jit."),
    ("is marked noinline, but was called with", "A helper marked noinline=True is compiled as a function of its "
                                                "own, which takes scalars only: leave noinline out (Triton inlines "
                                                "helpers) to pass it blocks."),
    ("Cannot call @triton.jit'd outside of the scope of a kernel", "Launch the kernel as kernel[grid](...) and "
                                                                   "call @triton.jit helpers only from kernels."),
)


def hint(message):
    """The advice for a known Triton error message, as a new line, or ''."""
    return next((f"\n{advice}" for pattern, advice in HINTS if pattern in message), "")


def diagnose(puzzle, case_results, params=None):
    """Puzzle-level diagnostics: the first of each kind from the failing cases, then the patterns. `params`:
    the kernel's own names for the puzzle's parameters, in order."""
    failing = [(spec, result) for spec, result in zip(puzzle.cases, case_results) if result.status != "pass"]
    if not failing:
        return []
    diagnostics, seen = [], set()
    for _, result in failing:
        for diagnostic in result.diagnostics:
            if diagnostic.kind not in seen:
                seen.add(diagnostic.kind)
                diagnostics.append(diagnostic)
    diagnostics += _stride_pattern(puzzle, case_results, dict(zip(puzzle.params, params or puzzle.params)))
    diagnostics += _configuration_pattern(puzzle, case_results)
    return diagnostics


def _configuration_pattern(puzzle, case_results):
    """Every case passes at its own blocks, and a case again at blocks the GPU stage launches with fails."""
    failed = [spec.name for spec, r in zip(puzzle.cases, case_results) if r.status != "pass"]
    if not failed or not all(configuration_case_base(name) for name in failed):
        return []
    return [Diagnostic("configuration_blocks", (
        "Every case passes at the blocks it chooses, and fails again at the blocks named in its name: those of the "
        "kernel's tuning configurations or of the benchmark's default launch, which the GPU stage compiles, times "
        "and ranks. A kernel must be right at every block size it accepts: look for what changes with the blocks "
        "(a loop bound, a branch on a block size, a tile larger than the data)."))]


def _stride_pattern(puzzle, case_results, names):
    contiguous = [r for spec, r in zip(puzzle.cases, case_results) if spec.layout == "contiguous"]
    strided = [(spec, r) for spec, r in zip(puzzle.cases, case_results) if spec.layout != "contiguous"]
    if not contiguous or not all(r.status == "pass" for r in contiguous):
        return []
    failed_layouts = sorted({spec.layout for spec, r in strided if r.status != "pass"})
    if not failed_layouts:
        return []
    strides = {}  # tensor -> its stride parameters, as the kernel names them, in the order of its dimensions
    for param, expression in puzzle.args.items():
        found = STRIDE.fullmatch(expression.source.strip())
        if found:
            strides.setdefault(found.group(1), []).append(names[param])
    layouts = ", ".join(LAYOUTS[layout] for layout in failed_layouts)
    each = "; ".join(f"{tensor} with {', '.join(params)}" for tensor, params in strides.items())
    return [Diagnostic("stride", (
        f"Every contiguous case passes but these layouts fail: {layouts}. The kernel assumes contiguous row-major "
        "memory somewhere: address every tensor with the strides the kernel receives for it, element (i, j) at "
        f"base + i * (its first stride) + j * (its second){f' ({each})' if each else ''}."))]


STRIDE = re.compile(r"(\w+)\.stride\(\s*-?\d+\s*\)")


def replay_code(puzzle, case, diagnostics, kernel, params):
    """The lines that launch a failing case again in a notebook, with run() and case(): the case's tensors, its
    grid, its sizes and blocks, and only the program the first diagnostic blames (all of them when none is).
    `kernel`, `params`: the kernel's own name and parameter names. None for a hidden case, whose sizes and
    values stay hidden."""
    if case.spec.hidden:
        return None
    blamed = next((d.program for d in diagnostics if d.program is not None and d.program[0] < len(case.launches)
                   and all(0 <= i < n for i, n in zip(d.program[1], case.launches[d.program[0]].grid))), None)
    launch_index = blamed[0] if blamed else 0
    launch = case.launches[launch_index]
    names = [tensor.name for tensor in puzzle.tensors]
    arguments, keywords = [], False
    for (course_param, expression), own in zip(puzzle.args.items(), params or puzzle.params):
        keywords = keywords or course_param in puzzle.constexprs
        value = _literal(expression, launch.symbols, names)
        arguments.append(f"{own}={value}" if keywords else value)
    arguments += [f"{name}={value!r}" for name, value in case.constants.items()]
    grid = tuple(launch.grid[:launch.dims])
    chosen = f", programs=[{program_name(blamed[1], launch.dims)!r}]" if blamed else ""
    piece = f", launch={launch_index}" if len(case.launches) > 1 else ""
    if diagnostics and diagnostics[0].kind == "undefined_lanes":  # as the run that went wrong filled them
        chosen += ", zero_undefined=True"
    unpacked = ", ".join(names) + ("," if len(names) == 1 else "")
    return (f"{unpacked} = case({puzzle.id!r}, {case.name!r}{piece})\n"
            f"run({kernel}, {grid!r}, {', '.join(arguments)}{chosen})")


def _literal(expression, symbols, tensors):
    """What a launch passes for one parameter, as code: a tensor's name, a number, or the course's expression
    of the tensors (x.stride(0))."""
    if expression.source.strip() in tensors:
        return expression.source.strip()
    try:
        value = expression(dict(symbols))
    except Exception:  # it reads a tensor: the expression itself, over the names case() unpacks
        return expression.source.strip()
    return repr(value) if isinstance(value, float) else repr(int(value))  # 1.0 stays a float: it types the launch
