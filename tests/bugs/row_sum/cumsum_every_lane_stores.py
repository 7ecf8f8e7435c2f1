"""Running sums of the row stored by every lane to the row's one output, for the last lane's (the total) to win:
the interpreter keeps the last lane's value, a GPU any lane's.

expect: race
"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        total += tl.sum(x.to(tl.float32), axis=0)
    lanes = tl.arange(0, BLOCK_N)
    # lane i holds total * (i + 1) / BLOCK_N: only the last is the total
    running = tl.cumsum(tl.full([BLOCK_N], 1.0, tl.float32), axis=0) * (total / BLOCK_N)
    tl.store(out_ptr + row + lanes * 0, running)
