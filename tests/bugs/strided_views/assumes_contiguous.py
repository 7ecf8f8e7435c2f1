"""The strides are ignored: element (i, j) is taken at i * N + j, as if the view were contiguous.

expect: stride
"""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    pointers = x_ptr + rows[:, None] * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(pointers, tl.load(pointers, mask=mask) + 1, mask=mask)
