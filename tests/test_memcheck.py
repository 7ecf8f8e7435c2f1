"""The memory checker refuses every out-of-bounds lane before it touches memory, and names the culprit."""
import numpy as np
import pytest
import torch
from triton.runtime import interpreter

from grader.pipeline.cases import Buffer
from grader.course import TensorSpec
from grader.pipeline.interpret import bind_arguments, interpreting, launch
from grader.pipeline.memcheck import MemoryChecker, OutOfBounds, Region

import kernels


def buffer_of(name, parent, views, role="input"):
    index = torch.arange(parent.numel())
    positions = [index.as_strided(v.shape, v.stride(), v.storage_offset()) for v in views]
    buffer = Buffer(TensorSpec(name, tuple(views[0].shape), role, True), parent, list(views), positions)
    buffer.writers = np.full(parent.numel(), -1, dtype=np.int64)
    buffer.readers = np.full(parent.numel(), -1, dtype=np.int64)
    return buffer


def run(kernel, buffers, args, grid):
    """Launch with regions for the tensor arguments `buffers` (param -> (buffer, launch index))."""
    regions = {param: Region(buffer, index, param) for param, (buffer, index) in buffers.items()}
    grid = tuple(grid) + (1,) * (3 - len(grid))
    programs = [(x, 0, 0) for x in range(grid[0])]
    with interpreting():
        launch(kernel, bind_arguments(kernel, args), grid, programs,
               MemoryChecker(regions, 0, grid, 1))


def test_in_bounds_copy_runs_and_records_writers():
    src, dst = torch.arange(10.0), torch.zeros(10)
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", dst, [dst], "output")
    run(kernels.copy_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)}, [src, dst, 10, 4], [3])
    assert torch.equal(dst, src)
    assert list(b_dst.writers) == [0] * 4 + [1] * 4 + [2] * 2


def test_store_past_the_end_is_blocked_before_it_writes():
    # dst is the first half of a larger allocation: an unchecked store would land in the second half.
    memory = torch.zeros(16)
    src, dst = torch.arange(16.0), memory[:10]  # src is long enough: only the store overruns
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", memory, [dst], "output")
    with pytest.raises(OutOfBounds) as error:
        run(kernels.unmasked_copy_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)}, [src, dst, 10, 8], [2])
    violation = error.value
    assert violation.access == "store" and violation.tensor == "dst" and violation.program == (1, 0, 0)
    assert list(violation.offsets) == [10, 11, 12, 13, 14, 15]
    assert torch.equal(memory[10:], torch.zeros(6)), "the blocked store must not have written anything"
    assert "program 1: store of 6 of 8 active lanes outside dst_ptr" in violation.message()


def test_a_pointer_of_a_wider_type_is_checked_over_every_byte_it_moves():
    """Through int64 pointers each lane of a float32 copy moves two elements: an even length is copied whole and
    recorded element by element; with an odd one the last lane reads and writes 4 bytes past the end, which a
    check of each lane's first address alone would let through."""
    src, dst = torch.arange(8.0), torch.zeros(8)
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", dst, [dst], "output")
    run(kernels.paired_copy_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)}, [src, dst, 8, 2], [2])
    assert torch.equal(dst, src) and list(b_dst.writers) == [0] * 4 + [1] * 4
    memory = torch.zeros(8)
    src, dst = torch.arange(8.0)[:7], memory[:7]
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", memory, [dst], "output")
    with pytest.raises(OutOfBounds) as error:
        run(kernels.paired_copy_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)}, [src, dst, 7, 4], [1])
    assert error.value.access == "load" and list(error.value.offsets) == [6]
    assert "Each lane moves 8 bytes (its pointer's element type) where the tensor's elements are 4" in \
        error.value.message()
    assert memory[7] == 0, "nothing was written"


def test_overrun_into_another_argument_is_blamed_on_the_right_tensor():
    # x and y are adjacent views of one allocation: reading past x lands inside y, which is still x's bug.
    memory = torch.arange(12.0)
    x, y = memory[:6], memory[6:]
    b_x, b_y = buffer_of("x", memory, [x]), buffer_of("y", memory, [y], "output")
    with pytest.raises(OutOfBounds) as error:
        run(kernels.unmasked_copy_kernel, {"src_ptr": (b_x, 0), "dst_ptr": (b_y, 0)}, [x, y, 6, 8], [1])
    assert error.value.tensor == "x" and error.value.access == "load"
    assert "That memory belongs to y" in error.value.message()


def test_an_overrun_names_no_tensor_that_merely_lies_next_in_memory():
    # Two tensors of their own, adjacent as an allocator may place them (or not, in another process): the report
    # must not depend on where the allocator put them.
    memory = np.arange(12, dtype=np.float32)
    x, y = torch.from_numpy(memory[:6]), torch.from_numpy(memory[6:])
    b_x, b_y = buffer_of("x", x, [x]), buffer_of("y", y, [y], "output")
    with pytest.raises(OutOfBounds) as error:
        run(kernels.unmasked_copy_kernel, {"src_ptr": (b_x, 0), "dst_ptr": (b_y, 0)}, [x, y, 6, 8], [1])
    assert error.value.tensor == "x" and "belongs to" not in error.value.message()


def test_neighbouring_split_column_is_out_of_bounds():
    parent = torch.zeros(4, 6)
    left, right = torch.split(parent, [2, 4], dim=1)
    buffer = buffer_of("x", parent.view(-1), [left, right], "inout")
    region = Region(buffer, 0, "x_ptr")
    inside_left = left.data_ptr() + 4 * np.array([0, 1, 6, 7])
    neighbour = left.data_ptr() + 4 * np.array([2, 5, 8])
    assert region.locate(inside_left.astype(np.uint64))[1].all()
    assert not region.locate(neighbour.astype(np.uint64))[1].any()


def test_far_pointer_is_reported_not_a_segfault():
    src, dst = torch.arange(8.0), torch.zeros(8)
    with pytest.raises(OutOfBounds) as error:
        run(kernels.far_pointer_kernel, {"src_ptr": (buffer_of("src", src, [src]), 0),
                                         "dst_ptr": (buffer_of("dst", dst, [dst], "output"), 0)}, [src, dst, 8, 8],
            [1])
    assert error.value.tensor == "src" and error.value.offsets[0] == 1 << 28


def test_atomics_are_checked():
    src, dst = torch.arange(8.0), torch.zeros(8)
    with pytest.raises(OutOfBounds) as error:
        run(kernels.atomic_past_end_kernel, {"src_ptr": (buffer_of("src", src, [src]), 0),
                                             "dst_ptr": (buffer_of("dst", dst, [dst], "output"), 0)},
            [src, dst, 8, 8], [1])
    assert error.value.access == "atomic" and error.value.tensor == "dst"
    assert torch.equal(dst, torch.zeros(8))


def test_strided_slice_allows_its_elements_only():
    parent = torch.zeros(3, 8)
    view = parent[:, ::2]
    region = Region(buffer_of("x", parent.view(-1), [view]), 0, "x_ptr")
    base = parent.data_ptr()
    allowed = np.array([base + 4 * (8 * i + 2 * j) for i in range(3) for j in range(4)], dtype=np.uint64)
    gaps = np.array([base + 4 * (8 * i + 2 * j + 1) for i in range(3) for j in range(4)], dtype=np.uint64)
    assert region.locate(allowed)[1].all()
    assert not region.locate(gaps)[1].any()
    assert not region.locate(np.array([base + 2], dtype=np.uint64))[1].any(), "misaligned addresses are refused"


@pytest.mark.parametrize("zero_undefined,padding", [(False, float("nan")), (True, 0.0)])
def test_masked_lanes_loaded_without_other_hold_nan_or_a_gpus_zero(zero_undefined, padding):
    for n in (3, 4):
        src, dst = torch.arange(1.0, 5.0), torch.full((4,), 7.0)
        regions = {"src_ptr": Region(buffer_of("src", src, [src[:n]]), 0, "src_ptr"),
                   "dst_ptr": Region(buffer_of("dst", dst, [dst], "output"), 0, "dst_ptr")}
        checker = MemoryChecker(regions, 0, (1, 1, 1), 1, zero_undefined)
        with interpreting():
            launch(kernels.padded_copy_kernel, bind_arguments(kernels.padded_copy_kernel, [src[:n], dst, n, 4]),
                   (1, 1, 1), [(0, 0, 0)], checker)
        assert torch.equal(dst[:n], src[:n])
        assert checker.undefined_loaded == (n < 4), "only a lane masked off is undefined"
        if n < 4:
            assert dst[3].isnan() if padding != padding else dst[3] == padding


def test_a_direct_run_in_a_notebook_is_checked_too(capsys):
    from grader.notebook import run as run_in_notebook
    src, dst = torch.arange(10.0), torch.zeros(10)
    assert run_in_notebook(kernels.copy_kernel, (3,), src, dst, 10, BLOCK=4)
    assert torch.equal(dst, src)
    memory = torch.zeros(16)
    assert not run_in_notebook(kernels.unmasked_copy_kernel, (2,), src, memory[:10], 10, BLOCK=8)
    assert "stopped before an out-of-bounds access: program 1: load of 6 of 8 active lanes" in capsys.readouterr().out
    assert torch.equal(memory[:8], src[:8]), "program 0 ran"
    assert torch.equal(memory[8:], torch.zeros(8)), "program 1 stopped before its store"


def overrun_into_the_neighbour(kernel, *constants):
    """The OutOfBounds of `kernel` copying src (the first 6 floats of an allocation) to dst, reading past src into
    its neighbour y; nothing is written."""
    memory = torch.arange(16.0)
    src, y, dst = memory[:6], memory[6:], torch.zeros(6)
    b_src, b_dst = buffer_of("src", memory, [src]), buffer_of("dst", dst, [dst], "output")
    b_y = buffer_of("y", memory, [y])
    with pytest.raises(OutOfBounds) as error:
        run(kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0), "y_ptr": (b_y, 0)}, [src, dst, 6, 4, *constants],
            [2])
    assert torch.equal(dst[4:], torch.zeros(2))
    return error.value


def test_a_tensor_descriptor_whose_shape_is_too_long_is_caught_against_its_own_tensor():
    """The pointers a descriptor computes for a block carry its base tensor's region: reading past src into y is
    src's overrun, and the reason names the descriptor's shape."""
    violation = overrun_into_the_neighbour(kernels.descriptor_copy_kernel, 4)
    assert violation.access == "load" and violation.tensor == "src" and violation.program == (1, 0, 0)
    assert list(violation.offsets) == [6, 7]
    assert "make_tensor_descriptor the tensor's own sizes and strides" in violation.message()


@pytest.mark.skipif(not hasattr(interpreter, "BlockPointerHandle"), reason="this Triton has no block pointers")
def test_a_block_pointer_without_boundary_check_is_caught_and_told_which_axis():
    violation = overrun_into_the_neighbour(kernels.block_pointer_copy_kernel)
    assert violation.access == "load" and violation.tensor == "src" and violation.program == (1, 0, 0)
    assert list(violation.offsets) == [6, 7]
    assert "reaches past its shape on axis 0, which boundary_check=() leaves unchecked" in violation.message()


def test_pointers_split_from_pairs_keep_their_tensor():
    violation = overrun_into_the_neighbour(kernels.split_pointers_copy_kernel)
    assert violation.access == "load" and violation.tensor == "src" and violation.program == (1, 0, 0)
    assert list(violation.offsets) == [6, 7, 8]


def test_a_load_budget_counts_each_element_once_a_program_and_masked_off_loads_whole():
    """Program 0 loads elements 0..3 (twice, at two lines), 0 again, masks off its whole load of 4..7, then loads
    0..3 three times more in a loop: 4 + 4 + 4 (the loop's third load of what it has). Program 1 loads 4..7
    (twice), 0, masks off its load of 8..11, past the end, and loops: 4 + 1 + 4 + 4. A second sweep over the same
    tiles elsewhere in the kernel, or by the same load repeating its first sweep, is not more traffic to budget; a
    load that loads again what it has (a clamped address, a third sweep), or whose every lane is masked off, still
    runs."""
    src, dst = torch.arange(8.0), torch.zeros(8)
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", dst, [dst], "output")
    run(kernels.loads_its_block_twice_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)}, [src, dst, 8, 4], [2])
    assert b_src.loads == 12 + 13


@pytest.mark.parametrize("sweeps, last_tile, counted", [
    (1, 3, 16),  # each of the 16 elements once
    (2, 3, 16),  # the loop body run twice (a two-pass softmax in tl.static_range(2)): the second sweep repeats the first
    (3, 3, 32),  # a third is counted here (passes_taken_back gives it back where every program repeats alike)
    (2, 1, 32),  # the second sweep strays from the first (tiles 0, 1, 1, 1): counted, all of it
    (2, 0, 32),  # tiles 0, 0, 0, 0: each reload of tile 0 looks like a second sweep starting, none completes
])
def test_a_load_budget_takes_back_one_second_sweep_that_repeats_the_first_load_for_load(sweeps, last_tile, counted):
    src, dst = torch.arange(16.0), torch.zeros(4)
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", dst, [dst], "output")
    run(kernels.sweeps_its_tiles_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)},
        [src, dst, sweeps, last_tile, 4], [1])
    assert b_src.loads == counted


@pytest.mark.parametrize("alike, counted", [
    (True, 32),  # three passes in every program: what three loops of their own load, each element once a program
    (False, 16 + 16 * 3),  # 2 and 4 sweeps: each program's second is taken back, the third and fourth are not
])
def test_later_sweeps_are_taken_back_where_every_program_repeats_alike(alike, counted):
    from grader.pipeline.memcheck import passes_taken_back
    src, dst = torch.arange(16.0), torch.zeros(8)
    b_src, b_dst = buffer_of("src", src, [src]), buffer_of("dst", dst, [dst], "output")
    run(kernels.sweeps_by_program_kernel, {"src_ptr": (b_src, 0), "dst_ptr": (b_dst, 0)}, [src, dst, alike, 4], [2])
    assert b_src.loads - passes_taken_back(b_src) == counted


@pytest.mark.parametrize("same, grid, race, repeated", [
    (True, 2, False, 1),  # tiles 0..3 and 2..5: elements 2 and 3 stored again with the values they hold
    (False, 2, True, 0),  # stored again with another value: which stays depends on the order
    (True, 3, False, 2),  # a third program over the last tile again: element 2 stored three times
])
def test_a_store_over_another_programs_is_a_race_unless_it_writes_the_value_there(same, grid, race, repeated):
    dst = torch.full((6,), -1.0)
    b_dst = buffer_of("dst", dst, [dst], "output")
    run(kernels.overlapping_tiles_kernel, {"dst_ptr": (b_dst, 0)}, [dst, 6, same, 4], [grid])
    assert (b_dst.race is not None) == race
    assert b_dst.repeated == repeated
