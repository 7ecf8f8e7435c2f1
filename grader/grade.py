"""The grading pipeline: load, make the cases, interpret with the memory checker, compare, diagnose, compile."""
import inspect

import torch

from . import compile_check
from .cases import make_case
from .compare import compare
from .diagnose import diagnose, hint
from .interpret import KernelCrashed, interpreting, launch, python_function
from .load import load_submission
from .memcheck import MemoryChecker, OutOfBounds, Region, program_name
from .results import CaseResult, Diagnostic, GradeReport, PuzzleResult
from .settings import DEFAULT


def grade_submission(course, path, puzzle_ids=None, seed=0, settings=DEFAULT, compile_kernels=True):
    """Grade a .py file, a notebook or a directory of them against the course's puzzles."""
    loaded = load_submission(path, course, puzzle_ids)
    kernels = {pid: item for pid, item in loaded.items() if item.kernel is not None}
    compile_job = None
    if compile_kernels and kernels:
        # Compiling runs in its own process, at the same time as the interpretation below.
        compile_job = compile_check.start(
            [(course.puzzle(pid), item.kernel, item.describe_line) for pid, item in kernels.items()], settings)
    results = []
    for puzzle_id, item in loaded.items():
        puzzle = course.puzzle(puzzle_id)
        if item.kernel is None:
            results.append(PuzzleResult(puzzle.id, puzzle.title, item.status, 0, puzzle.points, item.source,
                                        diagnostics=item.diagnostics))
            continue
        try:
            result = grade_kernel(puzzle, item.kernel, seed, settings, item.source, item.describe_line)
        except Exception as error:  # one puzzle's surprise must not cost the others their grades
            result = PuzzleResult(puzzle.id, puzzle.title, "error", 0, puzzle.points, item.source, diagnostics=[
                Diagnostic("kernel_error", f"grading stopped on an unexpected error: {type(error).__name__}: "
                                           f"{error}")])
        results.append(result)
    if compile_job:
        compiled = compile_job.results()
        for result in results:
            if result.status == "pass":
                compile_check.apply(result, compiled.get(result.id, []))
    return GradeReport(results)


def grade_kernel(puzzle, kernel, seed=0, settings=DEFAULT, source=None, describe_line=None):
    """Grade one kernel object on every case of the puzzle (interpretation only, no compile check)."""
    describe_line = describe_line or (lambda filename, line: f"line {line}")
    fn = python_function(kernel)
    problem = signature_problem(puzzle, kernel, fn)
    if problem:
        return PuzzleResult(puzzle.id, puzzle.title, "error", 0, puzzle.points, source,
                            diagnostics=[Diagnostic("load_error", problem)])
    case_results = []
    with interpreting():
        for index in range(len(puzzle.cases)):
            case_results.append(run_case(puzzle, index, fn, seed, settings, describe_line))
    passed = all(r.status == "pass" for r in case_results)
    return PuzzleResult(puzzle.id, puzzle.title, "pass" if passed else "fail", puzzle.points if passed else 0,
                        puzzle.points, source, case_results, diagnose(puzzle, case_results))


def signature_problem(puzzle, kernel, fn):
    """Why this object cannot be graded as the puzzle's kernel, or None."""
    expected = f"the puzzle expects @triton.jit def {puzzle.signature()}"
    if fn is None:
        if callable(kernel):
            return f"{puzzle.kernel} is a plain Python function: decorate it with @triton.jit ({expected})."
        return f"{puzzle.kernel} is a {type(kernel).__name__}, not a @triton.jit kernel ({expected})."
    params = list(inspect.signature(fn).parameters)
    if len(params) != len(puzzle.params):
        return (f"{puzzle.kernel} takes {len(params)} parameters ({', '.join(params)}) but the grader passes "
                f"{len(puzzle.params)}: {expected}.")
    return None


def run_case(puzzle, index, fn, seed, settings, describe_line, order=None):
    case = make_case(puzzle, index, seed)
    diagnostics = []
    for launch_index, planned in enumerate(case.launches):
        regions = {}
        for param, value in zip(puzzle.params, planned.args):
            if isinstance(value, torch.Tensor):
                name = next(n for n, view in planned.views.items() if view is value)
                buffer = case.buffers[name]
                regions[param] = Region(buffer, launch_index if len(buffer.views) > 1 else 0, param)
        programs = case.program_order(planned, order)
        try:
            launch(fn, planned.args, planned.grid, programs,
                   MemoryChecker(regions, launch_index, planned.grid, planned.dims))
        except OutOfBounds as violation:
            diagnostics.append(Diagnostic("out_of_bounds", violation.message(), case.name))
            break
        except KernelCrashed as crash:
            where = describe_line(crash.filename, crash.line) if crash.line else "inside Triton"
            program = program_name(crash.program, planned.dims)
            diagnostics.append(Diagnostic("kernel_error", (
                f"program {program} raised at {where}: {crash.source_line.strip()}\n"
                f"{type(crash.error).__name__}: {crash.error}{hint(str(crash.error))}"), case.name))
            break
    else:
        diagnostics = compare(case, settings)
    if diagnostics and case.spec.order == "shuffled" and order is None:
        sequential = run_case(puzzle, index, fn, seed, settings, describe_line, order="sequential")
        if sequential.status == "pass":
            diagnostics.insert(0, Diagnostic("order_dependent", (
                "This case passes when programs run in order 0, 1, 2, ... but fails in a shuffled order. On a GPU "
                "programs run in any order and at the same time: no program may depend on another one having "
                "run first."), case.name))
    return CaseResult(case.name, case.spec.describe(), "fail" if diagnostics else "pass", diagnostics)
