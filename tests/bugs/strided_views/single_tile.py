"""Written for one tile: every program adds one to the tile at the origin, the rest of x is untouched.

expect: mismatch
"""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    pointers = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(pointers, tl.load(pointers, mask=mask) + 1, mask=mask)
