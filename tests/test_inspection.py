"""`triton-course inspect`: the kernel compiled on the CPU as the GPU stage launches it, its IR, PTX and
resources."""
import re
import subprocess
import sys
import textwrap

import pytest

from grader.gpu.inspection import inspect_kernel
from grader.pipeline.load import SubmissionError

from conftest import ROOT


def run(*args):
    result = subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=ROOT)
    return result.returncode, result.stdout, result.stderr


def sections(report):
    return [line.strip("= ") for line in report.splitlines() if line.startswith("== ")]


def test_a_benchmarked_kernel_is_compiled_as_the_gpu_stage_launches_it(course):
    report = inspect_kernel(course, ROOT / "solutions" / "attention.py", "attention", 90)
    header = report.splitlines()[:2]
    # The first benchmark size in its dtype, with the solution's first @triton.autotune configuration.
    assert "HEAD_DIM=64, BLOCK_M=128, BLOCK_N=128" in header[0]
    assert "Z=128, N=4096, D=64, float16, num_warps=8, num_stages=3" in header[1]
    assert "(the first of its tuning configurations)" in header[1]
    assert sections(report) == ["Resources", "How fast would it be?", "Triton IR", "TritonGPU IR", "PTX"]
    assert "warps: 8 (256 threads per program)" in report
    estimate = report.split("== How fast would it be? ==")[1].split("== Triton IR")[0]
    assert "on an NVIDIA H100 SXM at Z=128, N=4096, D=64" in estimate and "bound by arithmetic" in estimate
    assert "sectors per warp request" in estimate and "programs per SM at once" in estimate
    # The softmax's max and sum along the rows of each 128x128 tile of scores: within each warp.
    assert "warps it spans" in estimate and re.search(r"128x128 +1 +\d+\.\d +1 +attention\.py line \d+\n", estimate)
    assert "registers: " in report and "per thread" in report
    ptx = report.split("== PTX ==")[1]
    # Hopper's asynchronous tensor-core instructions, and 16-byte copies: the pointers and the sizes are
    # specialised as a real launch specialises them.
    assert "wgmma.mma_async" in ptx
    assert "cp.async.cg.shared.global" in ptx and ", 0x10," in ptx


def test_a_tuning_configuration_in_the_students_own_names(course):
    """Triton's tutorial tunes BLOCK_SIZE_M/N/K: by position, the course's BLOCK_M/N/K."""
    report = inspect_kernel(course, ROOT / "tests" / "alternatives" / "matmul" / "tutorial03_grouped_ordering.py",
                            "matmul", 90)
    header = report.splitlines()[:2]
    assert "BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64" in header[0]
    assert "num_warps=8, num_stages=3 (the first of its tuning configurations)" in header[1]


def test_sm_80_has_no_hopper_instructions(course):
    report = inspect_kernel(course, ROOT / "solutions" / "matmul.py", "matmul", 80)
    ptx = report.split("== PTX ==")[1]
    assert "mma.sync" in ptx and "wgmma" not in ptx


def with_tuning(solution, decorator=""):
    """The reference solution with its @triton.autotune decorator replaced."""
    source = (ROOT / "solutions" / solution).read_text()
    return source[:source.index("@triton.autotune")] + decorator + source[source.index("@triton.jit"):]


def test_without_a_tuning_configuration_the_course_launch_is_used(course, tmp_path):
    submission = tmp_path / "softmax.py"
    submission.write_text(with_tuning("softmax.py"))
    header = inspect_kernel(course, submission, "softmax", 90).splitlines()[:2]
    assert "BLOCK_N=4096" in header[0]  # next_power_of_2(N) at the first size, M=8192, N=4096
    assert "float32, num_warps=8 (the course's launch configuration)" in header[1]


def test_the_configuration_inspected_is_the_first_the_pruner_keeps_at_the_benchmarks_size(course, tmp_path):
    """Listed second, the general configuration is the one the autotuner launches first on the benchmark's long
    vector: the report compiles and names it, not the first of the list (16-bit offsets kept off long vectors)."""
    alternative = (ROOT / "tests" / "alternatives" / "vector_add" / "pruned_short_offsets_off_long_vectors.py").read_text()
    listed = ('configs=[triton.Config({"BLOCK_SIZE": 1024, "SHORT": False}, num_warps=4),\n'
              '                          triton.Config({"BLOCK_SIZE": 1024, "SHORT": True}, num_warps=4)]')
    swapped = ('configs=[triton.Config({"BLOCK_SIZE": 1024, "SHORT": True}, num_warps=2),\n'
               '                          triton.Config({"BLOCK_SIZE": 1024, "SHORT": False}, num_warps=4)]')
    assert listed in alternative
    submission = tmp_path / "vector_add.py"
    submission.write_text(alternative.replace(listed, swapped))
    header = inspect_kernel(course, submission, "vector_add", 90).splitlines()[:2]
    assert "SHORT=False" in header[0] and "num_warps=4" in header[1], header
    assert "keeps at that size: number 2 in its list" in header[1], header


def test_a_puzzle_without_benchmark_uses_its_first_case(course):
    report = inspect_kernel(course, ROOT / "solutions" / "strided_views.py", "strided_views", 90)
    first = course.puzzle("strided_views").cases[0]
    assert f"as the first case ({first.name}, {first.dtype}) launches it" in report.splitlines()[1]


def test_an_invalid_tuning_configuration_is_named(course, tmp_path):
    submission = tmp_path / "vector_add.py"
    submission.write_text(with_tuning("vector_add.py", '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 100})], '
                                                       'key=["n_elements"])\n'))
    with pytest.raises(SubmissionError, match="invalid tuning configuration for vector_add: .*powers of 2"):
        inspect_kernel(course, submission, "vector_add", 90)


def test_the_cli_prints_the_report_or_says_why_not(tmp_path):
    code, out, _ = run("inspect", "solutions/", "--puzzle", "vector_add", "--target", "sm_80")
    assert code == 0 and out.startswith("add_kernel for sm_80, compiled on the CPU")
    code, out, err = run("inspect", "solutions/", "--puzzle", "no_such_puzzle")
    assert code == 2 and "no_such_puzzle" in err and "Traceback" not in err
    rejected = tmp_path / "vector_add.py"
    rejected.write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, 3)
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
        """))
    code, out, err = run("inspect", str(rejected), "--puzzle", "vector_add")
    assert code == 2 and "the compiler rejects add_kernel for sm_90" in err and "Traceback" not in err


def test_a_reader_that_stops_early_gets_no_traceback():
    process = subprocess.Popen([sys.executable, "-m", "grader.cli", "inspect", "solutions/", "--puzzle", "attention"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert process.stdout.readline().startswith("attention_kernel for sm_90")
    process.stdout.close()  # as `| head -1` does; the report is larger than the pipe's buffer
    assert "Traceback" not in process.stderr.read()
    assert process.wait() == 128 + 13  # as a shell reports a command killed by SIGPIPE


def test_each_tuning_configuration_is_estimated(course):
    """The check estimates the first tuning configuration; inspect estimates each the autotuner times and marks the
    fastest (triton.ops' matmul: its third, 128x128x32 with 4 warps, the one the H200's autotuner kept)."""
    submission = ROOT / "tests" / "alternatives" / "matmul" / "triton_ops_split_k_even_k_heuristic.py"
    report = inspect_kernel(course, submission, "matmul", 90)
    table = report[report.index("each tuning configuration"):report.index("== Triton IR ==")].splitlines()
    rows = [line for line in table if "BLOCK_M=" in line]
    assert [row.split("  ")[0] for row in rows] == [
        "BLOCK_M=128, BLOCK_N=256, BLOCK_K=32, SPLIT_K=1, 8 warps, 3 stages",
        "BLOCK_M=256, BLOCK_N=128, BLOCK_K=32, SPLIT_K=1, 8 warps, 3 stages",
        "BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, SPLIT_K=1, 4 warps, 4 stages",
        "BLOCK_M=64, BLOCK_N=128, BLOCK_K=32, SPLIT_K=1, 4 warps, 4 stages"]
    assert all(re.search(r"\d+ us  (memory|requests|latency|compute)", row) for row in rows), rows
    assert [row.endswith("<- the fastest estimated") for row in rows] == [False, False, True, False], rows
