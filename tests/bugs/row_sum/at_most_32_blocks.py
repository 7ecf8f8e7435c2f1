"""The loop over the row is unrolled for at most 32 blocks (tl.static_range(32), masked): right for every row of up to
32 * BLOCK_N elements, the benchmark's rows among them at its blocks of 1024, and silently short of the rest of a longer
row (on an H200, wrong at N=8192 with BLOCK_N=128).

expect: mismatch
"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for i in tl.static_range(32):
        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        partial += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(partial, axis=0))
