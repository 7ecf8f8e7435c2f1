"""Takes a view whose row stride is the smaller one for a transposed contiguous tensor, whose rows are adjacent
(stride 1): right for every contiguous, transposed and strided case, and wrong for a transposed strided slice,
parent[:, ::2].T, whose strides are 2 and 2N.

expect: out_of_bounds
"""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    # A student's "fast path": a view whose row stride is the smaller one is a transposed contiguous
    # tensor, so its rows are adjacent (stride 1). Wrong for x = parent[::2, :].T (strides (2, 2N)).
    if stride_m < stride_n:
        pointers = x_ptr + rows[:, None] + cols[None, :] * stride_n
    else:
        pointers = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    x = tl.load(pointers, mask=mask)
    tl.store(pointers, x + 1, mask=mask)
