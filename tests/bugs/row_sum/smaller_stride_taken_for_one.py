"""Takes a view whose row stride is the smaller one for a transposed contiguous tensor, whose rows are adjacent
(stride 1): right for every contiguous, transposed and strided case, and wrong for a transposed strided slice,
parent[:, ::2].T, whose strides are 2 and 2N.

expect: out_of_bounds
"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    # "transposed input: columns are stride 1 apart in memory" (wrong for parent[::2].T)
    step_n = stride_n
    step_m = stride_m
    if stride_m < stride_n:
        step_m = 1
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * step_m + cols * step_n, mask=cols < N, other=0.0)
        partial += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(partial, axis=0))
