"""The matmul tutorial's `rows % M`, `cols % N`: every lane loads a real element (the wrapped ones another
program's), and the store is masked to the tile's own. The wrapped lanes' values are never stored."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows_w = rows % M
    cols_w = cols % N
    x = tl.load(x_ptr + rows_w[:, None] * stride_m + cols_w[None, :] * stride_n)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n, x + 1, mask=mask)
