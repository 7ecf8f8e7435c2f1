"""The lanes past the edge point at element (0, 0) (`tl.where(mask, offsets, 0)`), loaded unmasked, and
only the masked store decides what is written."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = tl.where(mask, rows[:, None] * stride_m + cols[None, :] * stride_n, 0)
    x = tl.load(x_ptr + offsets)
    tl.store(x_ptr + offsets, x + 1, mask=mask)
