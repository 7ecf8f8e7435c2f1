"""8x16 tiles on 16 warps: 128 elements for 512 threads, three quarters of them idle copies, and 2 million
programs of 512 bytes each to schedule."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 8, "BLOCK_N": 16}, num_warps=16)], key=["M", "N"])
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tile = x[:, None] + y[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)
