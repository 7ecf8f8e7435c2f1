"""Tells the compiler that every row is a whole number of blocks (tl.assume), which the rows of the cases are not:
the compiler may then drop the mask's test of the last block, and the sum reads past the end of the row.

expect: kernel_error
"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    tl.assume(N % BLOCK_N == 0)
    row = tl.program_id(0)
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        partial += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(partial, axis=0))
