"""Blocks of 1024 hard-coded: BLOCK_SIZE (and so the grid's size) is ignored.

expect: unwritten_output
"""

import triton
import triton.language as tl


# Block sizes and warps for the GPU stage; the CPU grader uses each case's own block size.
@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
                          triton.Config({"BLOCK_SIZE": 4096}, num_warps=8)], key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * 1024 + tl.arange(0, 1024)  # blocks of 1024
    # The last block runs past the end when n_elements is not a multiple of BLOCK_SIZE.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
