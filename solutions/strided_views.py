"""Puzzle 3, strided views: x += 1 in place, for any 2-D view given by its strides."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    # Element (i, j) of a view lives at x_ptr + i * stride_m + j * stride_n, whatever the layout:
    # a split column, a strided slice or a transposed view only changes the strides.
    pointers = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(pointers, mask=mask)
    tl.store(pointers, x + 1, mask=mask)
