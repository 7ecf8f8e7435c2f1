"""128x128 tiles on one warp: 512 stores per thread issued by only 32 threads, and at about 134 registers a thread an
SM holds only 15 such warps, few stores in flight for DRAM's write bandwidth."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=1)], key=["M", "N"])
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tile = x[:, None] + y[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)
