"""A runtime branch on the strides: when the view's rows are the contiguous dimension (stride_m == 1, a
transposed view) the tile is addressed as [BLOCK_N, BLOCK_M] so the fast index runs along memory; each
branch loads and stores its own tile."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    if stride_m == 1:
        # column-major view: columns in the outer dimension of the tile, rows along memory
        ptrs_t = x_ptr + cols[:, None] * stride_n + rows[None, :]
        mask_t = (cols[:, None] < N) & (rows[None, :] < M)
        tile_t = tl.load(ptrs_t, mask=mask_t, other=0.0)
        tl.store(ptrs_t, tile_t + 1, mask=mask_t)
    else:
        ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tile = tl.load(ptrs, mask=mask, other=0.0)
        tl.store(ptrs, tile + 1, mask=mask)
