"""The mask takes the row stride for the width of a row: on a split view it reaches into the
neighbouring column of the split.

expect: out_of_bounds
"""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    pointers = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows[:, None] < M) & (cols[None, :] < stride_m)
    tl.store(pointers, tl.load(pointers, mask=mask) + 1, mask=mask)
