"""Kernels are interpreted whatever TRITON_INTERPRET said, and Triton is left exactly as it was."""
import json
import os
import subprocess
import sys
import textwrap

import triton
import triton.language as tl
from triton.runtime import interpreter
from triton.runtime.jit import JITFunction

from grader.pipeline.cases import make_case, make_cases
from grader.pipeline.grade import grade_kernel
from grader.pipeline.load import load_live
from grader.pipeline.protocol import job
from grader.settings import DEFAULT
from grader.pipeline.worker import run_puzzle

import kernels
from conftest import ROOT

HELPERS_SUBMISSION = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def _add(a, b):
        return a + b


    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        zero = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
        blocks = tl.cdiv(n_elements, BLOCK_SIZE) - tl.cdiv(n_elements, BLOCK_SIZE)
        tl.store(out_ptr + offsets, (_add(x, y) + zero + blocks + tl.sum(zero, axis=0)).to(out_ptr.dtype.element_ty),
                 mask=mask)
''')


def _check_json(path, env_interpret):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if env_interpret:
        env["TRITON_INTERPRET"] = "1"
    result = subprocess.run([sys.executable, "-m", "grader.cli", "check", str(path), "--json"],
                            capture_output=True, text=True, env=env, cwd=ROOT)
    return result.returncode, json.loads(result.stdout)


def test_graded_with_and_without_triton_interpret(tmp_path):
    path = tmp_path / "vector_add.py"
    path.write_text(HELPERS_SUBMISSION)
    for env_interpret in (False, True):
        code, report = _check_json(path, env_interpret)
        assert code == 0, report
        assert [p["status"] for p in report["puzzles"]] == ["pass"], (env_interpret, report)


def test_every_patch_is_restored_and_real_compilation_still_works(course, tmp_path):
    language_before = {name: getattr(tl, name) for name in dir(tl)}
    core_before = {name: getattr(tl.core, name) for name in dir(tl.core)}
    calls_before = (JITFunction.__call__, interpreter.InterpretedFunction.__call__)
    options_before = interpreter.interpreter_builder.options

    puzzle = course.puzzle("strided_views")
    request = job(puzzle.id, puzzle, load_live(kernels.add_one_kernel, puzzle).source, make_cases(puzzle), DEFAULT)
    outcome = run_puzzle(request, tmp_path)  # what the worker does: compile, then interpret every case
    assert outcome["compile"] == [] and all(run["error"] is None for case in outcome["cases"] for run in case["runs"])

    assert {name: getattr(tl, name) for name in dir(tl)} == language_before
    assert {name: getattr(tl.core, name) for name in dir(tl.core)} == core_before
    assert (JITFunction.__call__, interpreter.InterpretedFunction.__call__) == calls_before
    assert interpreter.interpreter_builder.options is options_before
    assert not [name for name in vars(interpreter.interpreter_builder) if name.startswith("create_")], \
        "the memory checker's wrappers were left on the interpreter builder"

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    source = ASTSource(fn=kernels.helpers_kernel, signature={"src_ptr": "*fp32", "dst_ptr": "*fp32", "n": "i32",
                                                              "BLOCK": "constexpr"}, constexprs={"BLOCK": 64})
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32))
    assert "ptx" in compiled.asm


def test_autotuned_and_heuristics_kernels_are_graded_under_the_puzzle_configs(course):
    puzzle = course.puzzle("vector_add")
    assert grade_kernel(puzzle, kernels.autotuned_add_kernel).status == "pass"
    assert grade_kernel(puzzle, kernels.heuristic_add_kernel).status == "pass"


def test_shuffled_order_is_a_permutation_of_the_grid(course):
    puzzle = course.puzzle("vector_add")
    index = next(i for i, c in enumerate(puzzle.cases) if c.order == "shuffled")
    case = make_case(puzzle, index)
    launch = case.launches[0]
    shuffled, sequential = case.program_order(launch), case.program_order(launch, "sequential")
    assert sequential == [(x, 0, 0) for x in range(launch.grid[0])]
    assert sorted(shuffled) == sequential and shuffled != sequential
    assert case.program_order(launch) == shuffled, "the order is reproducible"


def test_a_kernel_that_raises_gets_its_line_and_program(course, tmp_path, grade):
    path = tmp_path / "vector_add.py"
    path.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            step = n_elements - n_elements
            for start in range(0, n_elements, step):
                offsets = start + tl.arange(0, BLOCK_SIZE)
                x = tl.load(x_ptr + offsets, mask=offsets < n_elements)
                tl.store(out_ptr + offsets, x, mask=offsets < n_elements)
    '''))
    result = grade(path).puzzle("vector_add")
    diagnostic = result.diagnostics[0]
    assert result.status == "fail" and diagnostic.kind == "kernel_error", diagnostic.message
    assert "program 0 raised at vector_add.py line 9: for start in range(0, n_elements, step):" in \
        diagnostic.message
