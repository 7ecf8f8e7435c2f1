"""Stepping through a kernel: run() launches the programs chosen, a debugger and print show a kernel's values as a
student reads them, and a failing check gives the lines that launch its case again."""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import triton.language as tl

import kernels
from conftest import ROOT
from grader.notebook import case, run
from grader.pipeline.readable import describe


def test_blocks_masks_and_scalars_read_with_their_type_and_shape():
    assert describe(np.arange(4, dtype=np.int32), tl.int32, [4]) == "int32[4] [0, 1, 2, 3]"
    assert describe(np.array([1, 1, 0, 0], dtype=np.int8), tl.int1, [4]) == "int1[4] [True, True, False, False]"
    assert describe(np.array([7], dtype=np.int32), tl.int32, []) == "int32 7"
    tile = describe(np.arange(6, dtype=np.float32), tl.float32, [2, 3])
    assert tile.splitlines() == ["fp32[2, 3]", "[[0., 1., 2.],", " [3., 4., 5.]]"]
    assert "..." in describe(np.arange(4096, dtype=np.int32), tl.int32, [4096]), "a large block is summarised"
    untagged = describe(np.array([4096, 4100], dtype=np.uint64), tl.pointer_type(tl.float32), [2])
    assert untagged == "pointer<fp32>[2] at [0x1000, 0x1004]"


def test_print_and_device_print_in_a_kernel_show_readable_values(capsys):
    src, dst = torch.arange(6.0), torch.zeros(6)
    assert run(kernels.printing_copy_kernel, (2,), src, dst, 6, BLOCK=4)
    printed = capsys.readouterr().out.splitlines()
    assert printed[:4] == [
        "int32[4] [0, 1, 2, 3]", "int1[4] [True, True, True, True]", "pointer<fp32>[4] src_ptr + [0, 1, 2, 3]",
        "program 0 loaded: fp32[4] [0., 1., 2., 3.]"]
    assert printed[4:] == [
        "int32[4] [4, 5, 6, 7]", "int1[4] [True, True, False, False]",
        "pointer<fp32>[4] src_ptr + [4, 5, 6, 7] (offsets 6, 7 are outside src_ptr: 6 elements, offsets 0..5)",
        "program 1 loaded: fp32[4] [ 4.,  5., -1., -1.]"]


def test_run_launches_only_the_programs_chosen(capsys):
    src, dst = torch.arange(12.0), torch.zeros(12)
    assert run(kernels.copy_kernel, (3,), src, dst, 12, BLOCK=4, programs=[1])
    assert torch.equal(dst, torch.tensor([0.0] * 4 + [4.0, 5.0, 6.0, 7.0] + [0.0] * 4))
    x, out = torch.arange(6.0).view(2, 3), torch.zeros(2, 3)
    assert run(kernels.tile_kernel, (2, 3), x, out, 2, 3, BLOCK_M=1, BLOCK_N=1, programs=[(1, 2), (0, 0)])
    assert torch.equal(out, torch.tensor([[1.0, 0, 0], [0, 0, 6.0]]))
    with pytest.raises(ValueError, match=r"program \(2, 0\) is not in the grid \(2, 3\)"):
        run(kernels.tile_kernel, (2, 3), x, out, 2, 3, BLOCK_M=1, BLOCK_N=1, programs=[(2, 0)])
    with pytest.raises(ValueError, match="lists program ids such as 3"):
        run(kernels.copy_kernel, (3,), src, dst, 12, BLOCK=4, programs=["1"])
    memory = torch.zeros(16)
    assert not run(kernels.unmasked_copy_kernel, (2,), src[:10], memory[:10], 10, BLOCK=8, programs=[1])
    assert "launch program 1 alone, with programs=[1]" in capsys.readouterr().out
    assert torch.equal(memory, torch.zeros(16)), "program 0 did not run, program 1 stopped before its store"


PDB_SCRIPT = '''
import torch
import triton
import triton.language as tl
from grader.notebook import run

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    breakpoint()
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)

x, y, out = torch.arange(10.0), torch.full((10,), 100.0), torch.zeros(10)
print("launched:", run(add_kernel, (3,), x, y, out, 10, BLOCK_SIZE=4, programs=[2]))
print("out:", out.tolist())
'''


def test_a_scripted_pdb_session_stops_in_the_chosen_program_and_reads_its_blocks(tmp_path):
    """breakpoint() in a kernel launched by run() stops in pdb, once: only program 2 runs."""
    script = tmp_path / "step.py"
    script.write_text(PDB_SCRIPT)
    commands = "p pid\np offsets\np mask\np x\np x_ptr + offsets\nc\n"
    done = subprocess.run([sys.executable, str(script)], input=commands, capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1"})
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.count("(Pdb)") == 6 and out.count("-> tl.store(") == 1, "one stop, in the one program launched"
    assert "(Pdb) int32 2\n" in out
    assert "(Pdb) int32[4] [ 8,  9, 10, 11]\n" in out
    assert "(Pdb) int1[4] [True, True, False, False]\n" in out
    assert "(Pdb) fp32[4] [ 8.,  9., nan, nan]\n" in out, "masked-off lanes without other= read as NaN"
    assert "x_ptr + [ 8,  9, 10, 11] (offsets 10, 11 are outside x_ptr: 10 elements, offsets 0..9)" in out
    assert "launched: True" in out
    assert "out: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 108.0, 109.0]" in out


def test_quitting_the_debugger_stops_the_launch_cleanly(tmp_path):
    script = tmp_path / "step.py"
    script.write_text(PDB_SCRIPT.replace("programs=[2]", "programs=None"))
    done = subprocess.run([sys.executable, str(script)], input="q\n", capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "stopped in the debugger (q): the launch did not finish" in done.stdout
    assert "launched: False" in done.stdout


def test_case_gives_the_tensors_the_check_made(course):
    x, y, out = case("vector_add", "ragged tail")
    assert x.shape == y.shape == out.shape == (1000,) and out.isnan().all()
    x_again, _, _ = case("vector_add", 0)
    assert torch.equal(x, x_again)
    split = case("strided_views", next(s.name for s in course.puzzle("strided_views").cases if s.layout == "split"),
                 launch=1)
    assert not split[0].is_contiguous() or split[0].storage_offset() > 0, "a split launch's own view"
    with pytest.raises(ValueError, match="vector_add has no case 'nope'; its cases are: 'ragged tail'"):
        case("vector_add", "nope")
    # A case run again at a tuning configuration's blocks has the tensors of the case it repeats.
    a, _, _ = case("matmul", "many tiles in a shuffled order (blocks BLOCK_M=128, BLOCK_N=256, BLOCK_K=64)")
    assert torch.equal(a, case("matmul", "many tiles in a shuffled order")[0])


def test_a_breakpoint_left_in_a_kernel_fails_the_check_with_why(course, grade, tmp_path):
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    path = tmp_path / "vector_add.py"
    path.write_text(solution.replace("    tl.store(", "    breakpoint()\n    tl.store(", 1))
    result = grade(path, "vector_add").puzzles[0]
    assert result.status == "fail" and result.kinds == {"compile"}
    assert "breakpoint() stops a kernel launched with run() in the debugger" in result.diagnostics[0].message
    assert "remove it before checking" in result.diagnostics[0].message


@pytest.mark.slow
def test_breakpoint_stops_in_a_jupyter_kernel_and_the_debugger_reads_the_blocks():
    """In a real Jupyter kernel (driven through jupyter_client: nbclient cannot answer a debugger's prompts), a
    cell's kernel stops at breakpoint() under run() (the kernel gives breakpoint() to debugpy, which ignores it
    while JupyterLab's debugger is off: run() hands it to IPython's pdb), the prompts come as input requests,
    and the answers show program 2's blocks."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    answers = iter(["p pid", "p offsets", "p mask", "p x_ptr + offsets", "c"])
    prompts, printed = [], []

    def answer(message):
        prompts.append(message["content"]["prompt"])
        client.input(next(answers, "c"))

    def collect(message):
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])

    try:
        setup = 'import os\nos.environ["TRITON_INTERPRET"] = "1"\n' + PDB_SCRIPT
        reply = client.execute_interactive(setup, allow_stdin=True, stdin_hook=answer, output_hook=collect,
                                           timeout=180)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    text = re.sub(r"\x1b\[[0-9;]*m", "", "".join(printed))  # IPython's pdb colours its output
    assert reply["content"]["status"] == "ok", text
    assert "---> 16     tl.store(" in text, "stopped on the line after breakpoint(), in the cell's own numbering"
    assert prompts == ["ipdb> "] * 5, prompts
    for expected in ("int32 2", "int32[4] [ 8,  9, 10, 11]", "int1[4] [True, True, False, False]",
                     "x_ptr + [ 8,  9, 10, 11] (offsets 10, 11 are outside x_ptr", "launched: True",
                     "out: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 108.0, 109.0]"):
        assert expected in text, text


def test_run_gives_a_helper_in_another_module_the_loop_variables_of_the_grader(tmp_path):
    """A @jit helper imported from a file beside the notebook widens its loop's variable (row.to(tl.int64)), as the
    compiled loop's integer tensor allows: run() interprets it as the check does."""
    (tmp_path / "row_helpers.py").write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.jit
        def copy_rows(src, dst, M, N: tl.constexpr):
            for row in range(0, M):
                offsets = row.to(tl.int64) * N + tl.arange(0, N)
                tl.store(dst + offsets, tl.load(src + offsets))
        """))
    (tmp_path / "row_kernel.py").write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl
        from row_helpers import copy_rows


        @triton.jit
        def copy_kernel(src, dst, M, N: tl.constexpr):
            copy_rows(src, dst, M, N)
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        import row_kernel
        src, dst = torch.arange(12, dtype=torch.float32), torch.zeros(12)
        assert run(row_kernel.copy_kernel, (1,), src, dst, 3, N=4)
        assert torch.equal(dst, src) and "range" not in vars(sys.modules["row_helpers"])
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("row_kernel", "row_helpers"):
            sys.modules.pop(name, None)
