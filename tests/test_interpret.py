"""Kernels are interpreted whatever TRITON_INTERPRET said, and Triton is left exactly as it was."""
import inspect
import json
import os
import subprocess
import sys
import textwrap

import math

import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from triton.runtime import interpreter
from triton.runtime.jit import JITFunction

from grader.pipeline.cases import make_case, make_cases
from grader.pipeline.grade import grade_kernel
from grader.pipeline.interpret import bind_arguments, interpreting, python_function
from grader.pipeline.load import load_live
from grader.pipeline.protocol import job
from grader.settings import DEFAULT
from grader.pipeline.worker import run_puzzle

import kernels
from conftest import ROOT, graded_cases

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
    assert outcome["compile"] == [] and all(run["error"] is None for run in outcome["cases"])

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


def test_a_heuristic_sees_the_constants_the_autotuner_passes_as_triton_gives_them(course, grade, tmp_path):
    """Triton's autotuner passes its configuration's constants to the @triton.heuristics it wraps: a heuristic may
    compute from them (triton.ops.matmul's EVEN_K from BLOCK_K and SPLIT_K), for the live kernel and the rebuilt
    one whose first configuration's constants are its defaults."""
    x = torch.arange(8.0)
    assert bind_arguments(kernels.chunked_add_kernel, [x, x, x, 8])["CHUNKS"] == 4
    kernel = tmp_path / "chunked.py"
    source = inspect.getsource(python_function(kernels.chunked_add_kernel)).replace("chunked_add_kernel", "add_kernel")
    kernel.write_text("import triton\nimport triton.language as tl\n\n\n" + source)
    result = grade(kernel).puzzle("vector_add")
    assert result.status == "pass", result.diagnostics


def test_shuffled_order_is_a_permutation_of_the_grid(course):
    puzzle = course.puzzle("vector_add")
    index = next(i for i, c in enumerate(puzzle.cases) if c.order == "shuffled")
    case = make_case(puzzle, index)
    launch = case.launches[0]
    shuffled, sequential = case.program_order(launch), case.program_order(launch, "sequential")
    assert sequential == [(x, 0, 0) for x in range(launch.grid[0])]
    assert sorted(shuffled) == sequential and shuffled != sequential
    assert case.program_order(launch) == shuffled, "the order is reproducible"


def test_a_shuffled_case_runs_again_in_order_only_when_it_fails(course, grade, worker_requests):
    """Each case runs once, in its own program order; a public case that fails with its programs shuffled runs
    again in order, by a second worker that skips the compiles, which tells a kernel that depends on the order
    from one that is wrong in any order."""
    puzzle = course.puzzle("row_sum")
    shuffled = [i for i, spec in enumerate(puzzle.cases) if spec.order == "shuffled"]
    assert shuffled

    assert grade(ROOT / "solutions" / "row_sum.py", "row_sum").puzzle("row_sum").status == "pass"
    asked = [request for requests in worker_requests for request in requests]
    graded = graded_cases(course, "row_sum", ROOT / "solutions" / "row_sum.py")
    assert [[case["order"] for case in request["cases"]] for request in asked] == [[c.order for c in graded]]

    worker_requests.clear()
    # Its accesses are atomics that programs may share: nothing but the order tells it is wrong.
    bug = ROOT / "tests" / "bugs" / "row_sum" / "cleared_by_program_zero.py"
    result = grade(bug, "row_sum").puzzle("row_sum")
    # Its largest case, run again at the benchmark's blocks, is shuffled too.
    shuffled = [i for i, spec in enumerate(graded_cases(course, "row_sum", bug)) if spec.order == "shuffled"]
    asked = [request for requests in worker_requests for request in requests]
    assert len(asked) == 2 and "compiled" not in asked[0] and "compiled" in asked[1]
    assert [case["order"] for case in asked[1]["cases"]] == ["sequential"] * len(shuffled)
    assert [result.cases[i].diagnostics[0].kind for i in shuffled] == ["order_dependent"] * len(shuffled)


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


def test_a_heuristic_that_raises_is_told_at_the_line_that_raised(tmp_path, grade):
    path = tmp_path / "vector_add.py"
    path.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl


        def whole_blocks(args):
            blocks = args["n_elements"] // args["BLOCK_SIZE"]
            return blocks * args["BLOCK_SIZE"] == args["n_elements"] // (blocks - blocks)


        @triton.heuristics({"EVEN": whole_blocks})
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n_elements), mask=offsets < n_elements)
    '''))
    diagnostic = grade(path).puzzle("vector_add").diagnostics[0]
    assert diagnostic.kind == "kernel_error" and "raised at vector_add.py line 8: return blocks * args" in \
        diagnostic.message and "for EVEN raised ZeroDivisionError" in diagnostic.message, diagnostic.message


def _block(data):
    dtype = {np.float32: tl.float32, np.float16: tl.float16, np.int32: tl.int32}[data.dtype.type]
    return tl.core.tensor(interpreter.TensorHandle(data, dtype), tl.block_type(dtype, list(data.shape)))


def _reduce(combine, inputs, axis, keep_dims, one_at_a_time=False):
    """[(values, Triton type)] of tl.reduce over `inputs` (NumPy arrays) in the grader's interpreter, or by the
    interpreter's own element-by-element loop."""
    with interpreting():
        operation = interpreter.ReduceOps(axis, combine, keep_dims)
        blocks = tuple(_block(data) for data in inputs)
        reduced = (ORIGINAL_GENERIC_REDUCE(operation, blocks) if one_at_a_time
                   else operation.apply(blocks if len(blocks) > 1 else blocks[0]))
    reduced = reduced if isinstance(reduced, (tuple, list)) else (reduced,)
    return [(np.asarray(r.handle.data), r.type) for r in reduced]


ORIGINAL_GENERIC_REDUCE = interpreter.ReduceOps.generic_reduce


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_a_combine_function_of_the_kernels_own_reduces_as_the_interpreters_loop(axis, keep_dims):
    """The grader combines a block pairwise (log2(n) calls of the combine function, not n): the same values and
    types as the interpreter's one-element-at-a-time loop, for sums, tuples and an order-sensitive combine."""
    rng = np.random.default_rng(axis)
    sparse = (rng.standard_normal((16, 32)) * (rng.random((16, 32)) < 0.2)).astype(np.float32)
    examples = [(kernels.add_combine, [rng.standard_normal((16, 32)).astype(np.float32)]),
                (kernels.add_combine, [rng.integers(-1000, 1000, (4, 8)).astype(np.int32)]),
                (kernels.online_softmax_combine, [rng.standard_normal((16, 32)).astype(np.float32),
                                                  rng.random((16, 32)).astype(np.float32)]),
                (kernels.first_nonzero_combine, [sparse])]
    for combine, inputs in examples:
        pairwise = _reduce(combine, inputs, axis, keep_dims)
        loop = _reduce(combine, inputs, axis, keep_dims, one_at_a_time=True)
        for (fast, fast_type), (slow, slow_type) in zip(pairwise, loop, strict=True):
            assert fast_type == slow_type and fast.dtype == slow.dtype and fast.shape == slow.shape
            np.testing.assert_allclose(fast, slow, rtol=1e-5, atol=1e-5, err_msg=combine.fn.__name__)
    # float16 sums round at every step, differently in another order: both within the bound of n roundings.
    halves = rng.standard_normal((8, 64)).astype(np.float16)
    exact = np.sum(halves.astype(np.float64), axis=axis, keepdims=keep_dims)
    bound = halves.shape[axis] * np.finfo(np.float16).eps * np.sum(np.abs(halves.astype(np.float64)), axis=axis,
                                                                    keepdims=keep_dims)
    for one_at_a_time in (False, True):
        [(found, found_type)] = _reduce(kernels.add_combine, [halves], axis, keep_dims, one_at_a_time)
        assert found.dtype == np.float16 and found_type.scalar == tl.float16
        assert np.all(np.abs(found.astype(np.float64) - exact) <= bound)
    first = _reduce(kernels.first_nonzero_combine, [sparse], axis, keep_dims)[0][0]
    expected = np.take_along_axis(sparse, np.argmax(sparse != 0, axis=axis, keepdims=True), axis)
    assert np.array_equal(first, expected if keep_dims else np.squeeze(expected, axis))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_an_fma_rounds_once_as_on_the_gpu(dtype):
    """fma(x, x, -(x * x)) is the rounding error of x * x, which a GPU's fma gives (compensated sums are built on
    it), and which multiplying, then adding, would give as 0; tl.fma and libdevice's fma (float32) alike."""
    from grader.notebook import run
    x = torch.linspace(1.01, 3.0, 64, dtype=torch.float64).to(dtype)
    fused, libdevice = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    with_libdevice = dtype == torch.float32
    assert run(kernels.product_rounding_error_kernel, (1,), x, fused, libdevice, BLOCK=64, LIBDEVICE=with_libdevice)
    exact = x.double() * x.double() - (x * x).double()  # x * x is exact in float64; the error rounds once
    assert torch.equal(fused, exact.to(dtype))
    assert torch.equal(libdevice, exact.to(dtype)) or not with_libdevice
    assert fused.count_nonzero() > 32


def test_a_promise_to_the_compiler_is_checked_against_the_values_and_only_what_it_promises():
    """tl.multiple_of promises the first value of each run of consecutive values (a run may wrap, as the matmul
    tutorial's row indices `(pid * BLOCK + arange) % M` do); tl.max_constancy each aligned group of lanes."""
    from grader.pipeline.interpret import _not_constant, _not_multiples
    wrapped = (64 + np.arange(64)) % 100  # the last block of rows, M=100: 64..99, then 0..27
    assert _not_multiples(wrapped, [64]) is None
    assert "starts a run of consecutive values with 92, not a multiple of 64" in _not_multiples(
        (92 + np.arange(64)) % 120, [64])
    assert _not_multiples(np.array([1024]), [16]) is None
    assert _not_multiples(np.array([1000]), [16]) == "the value is 1000, not a multiple of 16"
    assert _not_multiples(np.arange(8) * 16, [16]) is None  # no run longer than one: each value a start
    assert "lane 2 along axis 0" in _not_multiples(np.array([0, 16, 33, 48]), [16])
    tiles = np.arange(4)[:, None] * 128 + np.arange(8)[None, :]
    assert _not_multiples(tiles, [1, 8]) is None and "along axis 1" in _not_multiples(tiles + 1, [1, 8])
    assert "along axis 0" in _not_multiples(tiles, [128, 8])  # a column of 1, 129, ...: runs of one, from 1
    mask = np.arange(16) < 12
    assert _not_constant(mask, [4]) is None and _not_constant(np.arange(16) < 13, [4]) == \
        "lanes 12 to 15 along axis 0 do not all hold one value"
    assert _not_constant(np.zeros(4), [8]) is None and _not_constant(np.arange(2), [8]) is not None


def test_a_float_out_of_an_integers_range_saturates_and_a_division_by_zero_is_minus_one_as_on_the_gpu():
    """cvt.rzi saturates (NaN is 0), where NumPy wraps 1e20 to INT_MIN; an H200 divides an integer by 0 into -1
    (every bit set), where NumPy gives 0: a kernel must not be able to tell the grader from a GPU by them."""
    from grader.notebook import run
    x = torch.tensor([1e20, -1e20, float("nan"), -2.7], dtype=torch.float32)
    n = torch.tensor([0, 2, -3, 0], dtype=torch.int32)
    signed, quotient = torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    assert run(kernels.to_integer_kernel, (1,), x, n, signed, quotient, BLOCK=4)
    assert signed.tolist() == [2 ** 31 - 1, -2 ** 31, 0, -2]
    assert quotient.tolist() == [-1, 3, -2, -1]
    from grader.pipeline.interpret import _saturated
    far = interpreter.TensorHandle(np.array([1e20, -1e20, 3e9, np.inf], dtype=np.float32), tl.float32)
    assert _saturated(far, tl.int64).data.tolist() == [2 ** 63 - 1, -2 ** 63, 3_000_000_000, 2 ** 63 - 1]
    assert _saturated(far, tl.uint64).data.tolist() == [2 ** 64 - 1, 0, 3_000_000_000, 2 ** 64 - 1]


def test_a_reduction_over_all_axes_keeps_them_as_the_gpu_does():
    """axis=None: every input of a tuple flattened (the interpreter's loop flattens only the first and fails), and
    keep_dims keeps every axis of the input, as the compiler's tl.reduce does."""
    rng = np.random.default_rng(1)
    maxima, sums = rng.standard_normal((8, 16)).astype(np.float32), rng.random((8, 16)).astype(np.float32)
    largest = maxima.max()
    expected_sum = np.sum(sums * np.exp(maxima - largest))
    [(found_max, max_type), (found_sum, _)] = _reduce(kernels.online_softmax_combine, [maxima, sums], None, False)
    assert found_max.item() == largest and max_type == tl.float32
    assert found_sum.item() == pytest.approx(expected_sum, rel=1e-5)
    [(kept, kept_type)] = _reduce(kernels.add_combine, [sums], None, True)
    assert kept.shape == (1, 1) and kept_type.shape == (1, 1)
    assert kept.item() == pytest.approx(sums.sum(), rel=1e-5)


def test_a_combine_function_for_one_element_at_a_time_gets_the_interpreters_loop():
    data = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    [(reduced, _)] = _reduce(kernels.branching_max_combine, [data], 1, False)
    assert np.array_equal(reduced, data.max(axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_tl_sort_and_topk_give_what_triton_s_bitonic_network_gives(dtype):
    """The grader sorts with NumPy (the network is hundreds of interpreted block operations, seconds a call)."""
    from grader.pipeline import interpret

    data = (np.random.default_rng(3).standard_normal((4, 16)) * 100).astype(dtype)
    with interpreting():
        network = interpret._interpretable(tl.standard.sort_impl.fn)
        for options in ({}, {"descending": 1}, {"k": 4, "descending": 1}, {"k": 4, "descending": 0}, {"k": 1}):
            fast, slow = interpret._sorted(_block(data), **options), network(_block(data), **options)
            assert fast.type == slow.type, options
            assert np.array_equal(np.asarray(fast.handle.data), np.asarray(slow.handle.data)), options


ORIGINAL_GENERIC_SCAN = interpreter.ScanOps.generic_scan


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_scan_with_a_combine_function_of_the_kernels_own_gives_the_interpreters_loop(axis, reverse):
    """tl.associative_scan in log2(n) block steps: the values and types of the element-by-element loop, for an
    integer sum, a float sum, an order-sensitive combine and (by the loop) one that branches on its arguments."""
    rng = np.random.default_rng(4)
    sparse = (rng.standard_normal((8, 16)) * (rng.random((8, 16)) < 0.2)).astype(np.float32)
    examples = [(kernels.add_combine, rng.integers(-1000, 1000, (8, 16)).astype(np.int32), 0),
                (kernels.add_combine, rng.standard_normal((8, 16)).astype(np.float32), 1e-5),
                (kernels.first_nonzero_combine, sparse, 0),
                (kernels.branching_max_combine, rng.standard_normal((4, 8)).astype(np.float32), 0)]
    for combine, data, tolerance in examples:
        with interpreting():
            operation = interpreter.ScanOps(axis, combine, reverse)
            [fast] = operation.apply((_block(data),))
            flipped = np.ascontiguousarray(np.flip(data, axis)) if reverse else data
            [slow] = ORIGINAL_GENERIC_SCAN(operation, (_block(flipped),))
        slow_data = np.flip(np.asarray(slow.handle.data), axis) if reverse else np.asarray(slow.handle.data)
        assert fast.type == slow.type and np.asarray(fast.handle.data).dtype == slow_data.dtype
        np.testing.assert_allclose(np.asarray(fast.handle.data), slow_data, rtol=tolerance, atol=tolerance,
                                   err_msg=combine.fn.__name__)


def test_a_negative_axis_reduces_and_scans_as_the_last_one():
    """tl.reduce(x, -1, combine) and tl.associative_scan(x, -1, combine) are the last axis's, as on the GPU (the
    interpreter's own loop leaves a scan over -1 unscanned)."""
    data = np.arange(1, 9, dtype=np.int32).reshape(2, 4)
    for combine in (kernels.add_combine, kernels.branching_max_combine):
        assert np.array_equal(_reduce(combine, [data], -1, False)[0][0], _reduce(combine, [data], 1, False)[0][0])
    with interpreting():
        [scanned] = interpreter.ScanOps(-1, kernels.add_combine, False).apply((_block(data),))
    assert np.array_equal(np.asarray(scanned.handle.data), np.cumsum(data, axis=1))


def test_a_combine_function_that_is_not_associative_gives_no_exact_answer():
    """On a GPU each thread folds its own elements in order before the threads combine in a tree, so `(a + b) / 2`
    is not the mean of a block: the grader's order is not a perfect tree either, and such a kernel fails."""
    data = np.arange(16, dtype=np.float32).reshape(1, 16)
    [(halved, _)] = _reduce(kernels.halving_combine, [data], 1, False)
    assert abs(halved.item() - data.mean()) > 0.5


ASSERTING = '''
import triton
import triton.language as tl


@triton.jit{decorator}
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.device_assert({condition}, "an offset past the end")
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
'''


@pytest.mark.parametrize("decorator, condition, fires", [
    ("(debug=True)", "offsets < n_elements", True),  # the last block's lanes past the end
    ("(debug=True)", "(offsets < n_elements) | ~mask", False),
    ("(debug=True)", "offsets >= 0", False),
    ("", "offsets < n_elements", False),  # without debug a GPU compiles the assert away
])
def test_a_device_assert_checks_as_on_a_gpu(tmp_path, grade, decorator, condition, fires):
    """tl.device_assert checks its condition where a GPU launch would (@triton.jit(debug=True)); Triton's own
    interpreter never does, and passed a kernel whose assert aborts it on a GPU."""
    path = tmp_path / "vector_add.py"
    path.write_text(ASSERTING.format(decorator=decorator, condition=condition))
    result = grade(path).puzzle("vector_add")
    if not fires:
        assert result.status == "pass", [d.message for d in result.diagnostics]
        return
    diagnostic = result.diagnostics[0]
    assert result.status == "fail" and diagnostic.kind == "kernel_error", diagnostic.message
    assert "program 3 raised at vector_add.py line 10: tl.device_assert(offsets < n_elements" in diagnostic.message
    assert "AssertionError: an offset past the end" in diagnostic.message


def test_inline_ptx_is_told_to_be_beyond_the_interpreter(tmp_path, grade):
    """tl.inline_asm_elementwise runs on a GPU, not in the interpreter: the report says it is the grader's limit
    and what to write instead, not only the interpreter's NotImplementedError."""
    source = (ROOT / "solutions" / "vector_add.py").read_text()
    old = "tl.store(out_ptr + offsets, x + y, mask=mask)"
    assert old in source
    path = tmp_path / "vector_add.py"
    path.write_text(source.replace(old, "tl.store(out_ptr + offsets, tl.inline_asm_elementwise('add.f32 $0, $1, "
                                        "$2;', '=r,r,r', [x, y], dtype=tl.float32, is_pure=True, pack=1), mask=mask)"))
    result = grade(path).puzzle("vector_add")
    assert result.status == "fail"
    assert "cannot run PTX: tl.inline_asm_elementwise cannot be checked here" in result.diagnostics[0].message


def test_a_case_runs_again_with_zeros_in_masked_lanes_only_where_nan_may_have_been_passed_over(course, tmp_path):
    """Vector add loads without other= but only adds: NaN there would show, 0 changes nothing, no second run. A row
    max over the padding (tl.max passes over NaN) runs again with 0 there, as a GPU fills it."""
    from grader.pipeline.load import load_submission
    for path, puzzle_id, again in [(ROOT / "solutions" / "vector_add.py", "vector_add", False),
                                   (ROOT / "tests" / "bugs" / "softmax" / "max_over_undefined_lanes.py", "softmax",
                                    True)]:
        puzzle = course.puzzle(puzzle_id)
        source = load_submission(path, course, [puzzle_id])[puzzle_id].source
        cases = make_cases(puzzle, 0)
        outcome = run_puzzle(job("j", puzzle, source, cases, DEFAULT), tmp_path, course)
        assert any("zero_filled" in run for run in outcome["cases"]) == again, path.name


def test_libdevice_functions_are_found_by_their_exact_names():
    """A libdevice symbol is computed as the function of its own name, less its type's letter and rounding mode:
    hadd (the halving add) is not add, rcbrt not cbrt, rhypot not hypot, ilogb and logb not log, erfcx not erfc."""
    from grader.pipeline.interpret import _libdevice_function
    f32, i32 = (lambda *v: np.array(v, np.float32)), (lambda *v: np.array(v, np.int32))
    assert _libdevice_function("__nv_hadd")(i32(3, -3, 2 ** 31 - 1), i32(4, -4, 2 ** 31 - 1)).tolist() == \
        [3, -4, 2 ** 31 - 1]
    assert _libdevice_function("__nv_rhadd")(i32(3, -3), i32(4, -4)).tolist() == [4, -3]
    assert _libdevice_function("__nv_rcbrtf")(f32(8.0, -27.0)).astype(np.float32).tolist() == f32(0.5, -1 / 3).tolist()
    assert _libdevice_function("__nv_rhypotf")(f32(3.0), f32(4.0)).tolist() == [0.2]
    assert _libdevice_function("__nv_ilogbf")(f32(8, 0.3, -9, 1e-40, 0, np.inf, np.nan)).tolist() == \
        [3, -2, 3, -133, -2 ** 31, 2 ** 31 - 1, -2 ** 31]
    assert _libdevice_function("__nv_logb")(np.array([8.0, 0.3, 0.0, -np.inf])).tolist() == [3, -2, -np.inf, np.inf]
    scaled = _libdevice_function("__nv_erfcxf")(f32(0, 1, -2, 24.0, 30.0))
    expected = [math.exp(v * v) * math.erfc(v) for v in (0, 1, -2, 24.0)] + [1 / (30 * math.sqrt(math.pi))]
    assert np.allclose(scaled, expected, rtol=1e-3)
    assert _libdevice_function("__nv_fadd_rn") is _libdevice_function("__nv_dadd_rz") is np.add
    assert _libdevice_function("__nv_fast_expf") is _libdevice_function("__nv_exp") is np.exp
    assert _libdevice_function("__nv_isinfd") is np.isinf and _libdevice_function("__nv_fmaf_rn") is \
        _libdevice_function("__nv_fma")
    assert _libdevice_function("__nv_brev") is None and _libdevice_function("__nv_norm3df") is None


def test_a_loop_variable_is_an_int_with_a_tensors_conversion_and_its_range_a_range():
    """Interpreted, a `range` loop's variable converts as the compiled loop's integer tensor does, after integer
    arithmetic too; host code of the module meanwhile gets a range it can measure, reverse and index."""
    from grader.pipeline.interpret import LoopIndex, LoopRange
    loop = LoopRange(2, 11, 3)
    assert len(loop) == 3 and list(reversed(loop)) == [8, 5, 2] and loop[1] == 5 and list(loop[1:]) == [5, 8]
    assert 8 in loop and loop.start == 2 and loop.step == 3 and list(loop) == list(loop) == [2, 5, 8]
    index = loop[2]
    for value in (index, index * 4, 3 + index, -index, index // 2, index % 5, index << 1, index & 7):
        assert isinstance(value, LoopIndex) and hasattr(value, "to"), value
    assert type(index / 2) is float and type(index + True) is int and index.dtype == tl.int32
    assert LoopIndex(2 ** 40).dtype == tl.int64
