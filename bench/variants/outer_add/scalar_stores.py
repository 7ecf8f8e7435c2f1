"""The column index is scaled by a run-time 1, so the compiler cannot prove columns contiguous: lanes still run
along N, but every store is 4 bytes instead of 16, four times the store instructions for the same bytes."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=4)], key=["M", "N"])
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    one = 1 + N // (N + 1)  # 1 (N // (N + 1) is 0), an integer the compiler knows nothing of
    cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)) * one
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tile = x[:, None] + y[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)
