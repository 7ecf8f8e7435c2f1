"""Kernels that pass in the interpreter are compiled for sm_90 and lowered for sm_80 on the CPU; rejections name the
line."""
import os
import textwrap

import pytest

from grader.pipeline.cases import make_case
from grader.pipeline.compile_check import _forked, signature
from grader.pipeline.grade import grade_sources
from grader.pipeline.load import load_submission
from grader.pipeline.interpret import bind_arguments

from conftest import BUGS, ROOT, write_notebook

import kernels


def test_an_import_inside_the_kernel_is_rejected_at_its_line(grade):
    result = grade(BUGS / "vector_add" / "import_in_kernel.py").puzzle("vector_add")
    assert result.status == "fail" and result.points == 0
    assert result.cases == [], "a kernel that does not compile is not run"
    [diagnostic] = result.diagnostics
    assert diagnostic.kind == "compile"
    assert "import_in_kernel.py line 11: import math\n" in diagnostic.message
    assert "Imports are not allowed inside a kernel" in diagnostic.message


def test_a_rejection_inside_a_helper_is_reported_at_the_helpers_line_with_its_message(grade):
    [diagnostic] = grade(BUGS / "vector_add" / "global_in_helper.py").puzzle("vector_add").diagnostics
    assert diagnostic.kind == "compile"
    assert "global_in_helper.py line 14: return v * SCALE\n" in diagnostic.message
    assert "Cannot access global variable SCALE" in diagnostic.message


def test_a_call_that_breaks_a_noinline_helpers_rules_is_reported_where_the_kernel_calls_it(grade):
    """Triton names the helper's source with the call's line and column in the kernel."""
    [diagnostic] = grade(BUGS / "vector_add" / "noinline_helper_given_blocks.py").puzzle("vector_add").diagnostics
    assert diagnostic.kind == "compile"
    assert "noinline_helper_given_blocks.py line 21: tl.store(out_ptr + offsets, _add(x, y), mask=mask)\n" in \
        diagnostic.message
    assert "marked noinline, but was called with non-scalar argument" in diagnostic.message
    assert "takes scalars only" in diagnostic.message


def test_a_float32_dot_compiles_as_the_gpu_stage_compiles_it_in_ieee_not_tf32():
    """The puzzles' float32 tl.dot is IEEE (interpret.FLOAT32_DOT), which runs on the CUDA cores: compiled with
    Triton's TF32 default, the estimate's registers and shared memory were another kernel's."""
    import torch
    from grader.pipeline.compile_check import lower_kernel
    ttgir = str(lower_kernel(kernels.float32_dot_kernel, [torch.zeros(16, 16), torch.zeros(16, 16), 16], 90))
    assert "dot_op<{opIdx = 0, parent = #blocked" in ttgir and "#mma" not in ttgir


def test_what_the_ptx_assembler_refuses_is_reported_at_the_line_that_made_it(grade):
    """ptxas's own message names a line of PTX in a temporary file: the report gives the kernel's line instead.
    ptxas runs for the newest target, sm_90, the GPU stage's: sm_80's compile stops before the LLVM lowering."""
    result = grade(BUGS / "vector_add" / "clashing_cache_hints.py").puzzle("vector_add")
    [diagnostic] = result.diagnostics
    assert diagnostic.kind == "compile" and "(sm_90)" in diagnostic.message
    assert "clashing_cache_hints.py line 13: x = tl.load(" in diagnostic.message
    assert "ptxas) refuses the code Triton made of it: Modifier '.evict_first' cannot be combined" in diagnostic.message
    assert ".ptx" not in diagnostic.message and "keep one of the two" in diagnostic.message


def test_a_small_fp16_dot_is_rejected_in_a_notebook_cell(tmp_path, grade):
    source = textwrap.dedent('''\
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_elements
            x = tl.load(x_ptr + offsets, mask=mask)
            y = tl.load(y_ptr + offsets, mask=mask)
            eight = tl.arange(0, 8)
            tile = tl.zeros([8, 8], dtype=tl.float16)
            tile = tl.dot(tile, tile)
            tl.store(out_ptr + offsets, x + y + tl.sum(tl.sum(tile, axis=1), axis=0).to(x.dtype), mask=mask)
    ''')
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", ["import torch", source])
    result = grade(notebook).puzzle("vector_add")
    assert result.status == "fail", [d.message for d in result.diagnostics]
    assert result.diagnostics[0].kind == "compile"
    assert "01_vector_add.ipynb cell 2, line 13" in result.diagnostics[0].message
    assert "K >= 16" in result.diagnostics[0].message


def test_the_signature_follows_the_kernel_annotations(course):
    args = make_case(course.puzzle("strided_views"), 0).launches[0].args
    assert args[1:] == [37, 50, 50, 1, 16, 16]
    bound = bind_arguments(kernels.add_one_kernel, args)
    types, constexprs, attrs = signature(kernels.add_one_kernel, bound)
    # As a GPU launch specialises them: the int equal to 1 folded in, the pointer (16-byte aligned) and
    # the ints divisible by 16 marked.
    assert types == {"x_ptr": "*fp32", "M": "i32", "N": "i32", "stride_m": "i32", "stride_n": "constexpr",
                     "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    assert constexprs == {"stride_n": 1, "BLOCK_M": 16, "BLOCK_N": 16}
    assert attrs == {(0,): [["tt.divisibility", 16]]}


def test_an_int_equal_to_one_is_folded_in_as_a_launch_does():
    import torch
    bound = bind_arguments(kernels.add_one_kernel, [torch.empty(96, dtype=torch.float16), 3, 32, 32, 1, 16, 32])
    types, constexprs, attrs = signature(kernels.add_one_kernel, bound)
    assert types["stride_n"] == "constexpr" and constexprs["stride_n"] == 1
    assert types["M"] == "i32" and (1,) not in attrs and attrs[(2,)] == [["tt.divisibility", 16]]


@pytest.mark.parametrize("annotation,value,refused", [
    ("int", 1000, None), ("'i8'", 100, None), ("'i8'", 1000, "'i8', which cannot hold 1000"),
    ("'u16'", -1, "'u16', which cannot hold -1"), ("float", 1000, None), ("'fp32'", 2.5, None),
])
def test_an_annotated_parameter_is_typed_as_triton_types_it(annotation, value, refused):
    """Triton types a parameter as its annotation says (int is i32, float fp32, 'i8' i8), whatever the value, and
    refuses a launch whose int the type cannot hold: the compile check does the same (it typed by the value)."""
    namespace = {}
    exec(f"def kernel(x_ptr, n: {annotation}, BLOCK: 'tl.constexpr'):\n    pass\n", namespace)
    import torch
    bound = {"x_ptr": torch.empty(4), "n": value, "BLOCK": 16}
    if refused:
        with pytest.raises(ValueError, match=refused):
            signature(namespace["kernel"], bound)
        return
    types, _, _ = signature(namespace["kernel"], bound)
    assert types["n"] == {"int": "i32", "'i8'": "i8", "float": "fp32", "'fp32'": "fp32"}[annotation]


def test_a_pointer_annotated_with_another_type_than_its_tensor_is_refused():
    """Triton reads a tensor's memory as its pointer annotation says: a float32 tensor under '*fp16' is read as
    halves of floats, which the interpreter, reading the tensor as it is, never shows."""
    import torch
    namespace = {}
    exec("def kernel(x_ptr: '*fp16', n):\n    pass\n", namespace)
    assert signature(namespace["kernel"], {"x_ptr": torch.empty(4, dtype=torch.float16), "n": 3})[0]["x_ptr"] == "*fp16"
    with pytest.raises(ValueError, match="passes a float32 tensor: Triton would read its memory as fp16"):
        signature(namespace["kernel"], {"x_ptr": torch.empty(4), "n": 3})


def test_a_float8_type_only_newer_gpus_have_is_rejected_for_sm_80_alone_in_the_case_that_uses_it(tmp_path, grade,
                                                                                                   course):
    # The front of the compiler accepts float8e4nv for sm_90 but not for sm_80: a launch it accepted for sm_80 is
    # not traced again for sm_90, one it rejected there is.
    (tmp_path / "vector_add.py").write_text(textwrap.dedent('''\
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_elements
            x = tl.load(x_ptr + offsets, mask=mask)
            if BLOCK_SIZE == 512:
                x = x.to(tl.float8e4nv).to(tl.float32)
            tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
    '''))
    result = grade(tmp_path / "vector_add.py").puzzle("vector_add")
    [diagnostic] = result.diagnostics
    assert diagnostic.kind == "compile" and result.cases == []
    assert diagnostic.message.startswith(
        "the GPU compiler (sm_80) rejects the kernel as the case 'exact multiple' launches it"), diagnostic.message
    assert "vector_add.py line 11:" in diagnostic.message and "fp8e4nv" in diagnostic.message
    # A notebook's check, with cores to spare, compiles in forks beside the interpretation: the same verdict.
    source = load_submission(tmp_path / "vector_add.py", course, ["vector_add"])["vector_add"].source
    in_worker, in_forks = (grade_sources(course, {"vector_add": source}, spare_cores=spare)["vector_add"]
                           for spare in (False, True))
    assert [(d.kind, d.message) for d in in_forks.diagnostics] == [(d.kind, d.message) for d in in_worker.diagnostics]
    assert in_forks.diagnostics[0].message.startswith("the GPU compiler (sm_80) rejects")


def test_a_compile_whose_process_ends_without_an_answer_says_so():
    assert _forked(lambda: {"registers": 32})() == {"registers": 32}
    assert _forked(os._exit, 3)() == {"error": "the compiler's process ended without an answer"}


def test_a_forked_compile_tells_its_early_answer_once_and_its_silence_too(monkeypatch):
    """The fork tells the lane layouts before its compile ends; one that ends before it tells (a compile refused
    in its front) or cannot be forked leaves them to the compile's answer."""
    from grader.pipeline.compile_check import _forked_telling

    def telling(value, tell):
        if tell is not None:
            tell({"early": value})
            tell({"again": value})  # a second answer is not told
        return {"late": value}
    finished, told = _forked_telling(telling, 1)
    assert told() == {"early": 1} and told() == {"early": 1} and finished() == {"late": 1}
    finished, told = _forked_telling(lambda tell: {"late": 2})
    assert told() is None and finished() == {"late": 2}
    finished, told = _forked_telling(lambda tell: os._exit(3))
    assert told() is None and finished() == {"error": "the compiler's process ended without an answer"}

    def no_fork():
        raise OSError("no process to spare")
    monkeypatch.setattr(os, "fork", no_fork)
    finished, told = _forked_telling(telling, 4)
    assert told is None and finished() == {"late": 4}


def test_a_sandboxed_worker_keys_its_compile_cache_by_the_triton_version_without_hashing_the_library():
    """The worker's cache is a folder of one attempt: hashing Triton's library for its key (0.4 s a worker) buys
    nothing there. The grader's own process keeps Triton's key."""
    import subprocess
    import sys
    script = textwrap.dedent("""
        import triton
        from triton.runtime import cache
        from grader.pipeline import worker
        library_key = cache.triton_key()
        worker.warm_up()  # what the warm worker runs before its first submission; compiles for every target
        print(library_key != f"triton-{triton.__version__}", cache.triton_key() == f"triton-{triton.__version__}")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split() == ["True", "True"], done.stderr[-3000:]


def test_an_older_target_runs_the_passes_of_its_own_gpu_short_of_llvm():
    """sm_80's compile of the first launch goes through the TritonGPU passes, where targets differ: a tl.dot
    becomes the Ampere tensor-core instruction there and Hopper's for sm_90."""
    import torch
    import triton
    import triton.language as tl

    from grader.pipeline.compile_check import lower_kernel

    @triton.jit
    def square(x_ptr, out_ptr, BLOCK: tl.constexpr):
        rows = tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :]
        tile = tl.load(x_ptr + rows)
        tl.store(out_ptr + rows, tl.dot(tile, tile).to(tl.float16))

    x = torch.empty(64 * 64, dtype=torch.float16)
    for target, version in ((80, "versionMajor = 2"), (90, "versionMajor = 3")):
        module = str(lower_kernel(square, [x, x, 64], target))
        assert "ttg.nvidia_mma" in module and version in module and "llvm." not in module


def test_a_parameter_triton_does_not_specialize_stays_a_typed_argument():
    """@triton.jit(do_not_specialize=[...]): Triton's launcher passes an int equal to 1 as an i32 and marks no
    divisibility (do_not_specialize_on_alignment: no divisibility only); the compile check does the same."""
    import torch
    import triton
    import triton.language as tl

    def body(x_ptr, stride, n, BLOCK: tl.constexpr):
        pass
    bound = {"x_ptr": torch.empty(4), "stride": 1, "n": 32, "BLOCK": 16}
    types, constexprs, attrs = signature(triton.jit(body, do_not_specialize=["stride", "n"]), bound)
    assert types["stride"] == "i32" and "stride" not in constexprs and types["n"] == "i32" and (2,) not in attrs
    types, constexprs, attrs = signature(triton.jit(body, do_not_specialize_on_alignment=["n"]), bound)
    assert constexprs["stride"] == 1 and types["n"] == "i32" and (2,) not in attrs and (0,) in attrs
    types, constexprs, attrs = signature(triton.jit(body), bound)
    assert constexprs["stride"] == 1 and attrs[(2,)] == [["tt.divisibility", 16]]


@pytest.mark.parametrize("puzzle_id", ["outer_add", "matmul", "attention"])
def test_the_lane_layouts_told_ahead_are_the_compiles(course, tmp_path, puzzle_id):
    """With a core to spare the profile starts before the benchmark's compile ends, with the lane layouts its fork
    tells once the TritonGPU passes are done: they must be the ones the whole compile gives (outer add's store
    lays its lanes down the columns)."""
    from grader.pipeline.compile_check import benchmark_compile
    from grader.pipeline.traffic import Plan
    from grader.pipeline.worker import KernelModules
    puzzle = course.puzzle(puzzle_id)
    source = load_submission(ROOT / "solutions" / f"{puzzle_id}.py", course, [puzzle_id])[puzzle_id].source
    told = {}
    for fork in (True, False):
        modules = KernelModules(source.modules, tmp_path, f"k{fork:d}")
        plan = Plan(getattr(modules.load("_plan"), source.kernel), puzzle, [])
        finished, lanes = benchmark_compile(modules, source.kernel, (90, plan.args, plan.config), fork)
        resources = finished()
        told[fork] = [[os.path.basename(file)[3:], *rest] for file, *rest in lanes()]  # k1_0.py and k0_0.py
        assert [[os.path.basename(file)[3:], *rest] for file, *rest in resources["lanes"]] == told[fork]
    assert told[True] == told[False]
    if puzzle_id == "outer_add":
        assert [entry for entry in told[True] if entry[2] == "store" and entry[3] is not None]


@pytest.mark.parametrize("path, puzzle_id", [("solutions/matmul.py", "matmul"),
                                             ("tests/alternatives/vector_add/tensor_descriptors.py", "vector_add")])
def test_the_estimates_compile_without_proxy_fences_asks_the_same_of_an_sm(course, tmp_path, monkeypatch, path,
                                                                           puzzle_id):
    """The estimate's sm_90 compile skips the pass that inserts fences between shared memory's proxies (a quarter of
    3.9's LLVM lowering at matmul's tiles): the registers, spills, shared memory and lane layouts are those of the
    whole compile, for a tl.dot kernel (whose LLVM IR the pass leaves as it is) and for one of tensor descriptors
    (whose LLVM IR it changes)."""
    import contextlib

    from grader.pipeline import compile_check
    from grader.pipeline.traffic import Plan
    from grader.pipeline.worker import KernelModules
    puzzle = course.puzzle(puzzle_id)
    source = load_submission(ROOT / path, course, [puzzle_id])[puzzle_id].source
    modules = KernelModules(source.modules, tmp_path, "k")
    kernel = getattr(modules.load(), source.kernel)
    plan = Plan(kernel, puzzle, [])
    without = compile_check.compile_resources(kernel, plan.args, 90, plan.config)
    monkeypatch.setattr(compile_check, "_without_proxy_fences", contextlib.nullcontext)
    whole = compile_check.compile_resources(kernel, plan.args, 90, plan.config)
    assert "error" not in whole

    def placed(resources):  # a compile of the same text in another test may name that test's file: lines alone
        return {**resources, "lanes": [entry[1:] for entry in resources["lanes"]]}
    assert placed(without) == placed(whole) and whole["lanes"]
