"""The .cpu() stride pitfall: a contiguous copy used with the view's strides; the grader moves storages."""
import numpy as np
import torch

from grader.pipeline.interpret import bind_arguments, interpreting, launch
from grader.pipeline.memcheck import MemoryChecker, OutOfBounds, Region
from grader.gpu.transfer import StorageTransfer

from test_memcheck import buffer_of

import kernels


def _add_one(tensor, strides, storage_parent):
    """Launch the add-one kernel on `tensor` with `strides`; the memory is that of the flat `storage_parent`."""
    buffer = buffer_of("x", storage_parent, [tensor], "inout")
    grid = ((tensor.shape[0] + 15) // 16, (tensor.shape[1] + 15) // 16, 1)
    programs = [(x, y, 0) for x in range(grid[0]) for y in range(grid[1])]
    with interpreting():
        launch(kernels.add_one_kernel,
               bind_arguments(kernels.add_one_kernel, [tensor, *tensor.shape, *strides, 16, 16]), grid, programs,
               MemoryChecker({"x_ptr": Region(buffer, 0, "x_ptr")}, 0, grid, 2))


def _split_parent():
    parent = torch.arange(24.0).view(4, 6)
    return parent, parent + 1


def test_naive_contiguous_copies_corrupt_the_parent():
    parent, expected = _split_parent()
    blocked = 0
    for piece in torch.split(parent, [2, 4], dim=1):
        copy = piece.contiguous()  # what .cpu() of a CUDA view gives: a contiguous copy
        try:
            _add_one(copy, piece.stride(), copy.view(-1))  # ... used with the view's strides (6, 1)
        except OutOfBounds:
            blocked += 1  # on a GPU, or in Triton < 3.3, this reads and writes memory past the copy
        piece.copy_(copy)
    assert blocked == 2
    assert not torch.equal(parent, expected)


def test_the_grader_transfer_keeps_both_writes_in_the_parent():
    parent, expected = _split_parent()
    pieces = torch.split(parent, [2, 4], dim=1)
    transfer = StorageTransfer(pieces, "cpu")
    moved = transfer.moved
    assert [m.stride() for m in moved] == [(6, 1), (6, 1)]
    assert [m.storage_offset() for m in moved] == [0, 2]
    assert moved[0].untyped_storage().data_ptr() == moved[1].untyped_storage().data_ptr()
    assert moved[0].untyped_storage().data_ptr() != parent.untyped_storage().data_ptr(), "it is a copy"
    storage = torch.empty(0).set_(moved[0].untyped_storage())
    for piece in moved:
        _add_one(piece, piece.stride(), storage)
    assert torch.equal(parent, torch.arange(24.0).view(4, 6)), "nothing reached the source before copy_back"
    transfer.copy_back()
    assert torch.equal(parent, expected)
    assert np.array_equal(parent.numpy(), expected.numpy())
