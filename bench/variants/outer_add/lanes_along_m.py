"""Lanes run down the columns of out (along M): each warp's store writes one float into each of 32 rows, 32 sectors
per request where 4 would do. The column index is scaled by a run-time 1 so the compiler cannot re-coalesce it."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=4)], key=["M", "N"])
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    # one is 1 (N // (N + 1) is 0), but the compiler no longer knows that neighbouring columns are neighbours.
    one = 1 + N // (N + 1)
    cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)) * one
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    # The tile transposed, BLOCK_N x BLOCK_M: its last dimension, the one lanes walk along, is M.
    tile = y[:, None] + x[None, :]
    mask = (cols[:, None] < N) & (rows[None, :] < M)
    tl.store(out_ptr + rows[None, :] * N + cols[:, None], tile, mask=mask)
