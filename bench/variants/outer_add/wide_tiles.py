"""A good configuration: wide tiles along the contiguous dimension.
The reference solution's kernel, launched on the GPU with one configuration."""
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    # [:, None] makes a column and [None, :] a row: broadcasting them gives the BLOCK_M x BLOCK_N tile.
    tile = x[:, None] + y[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)


GPU_CONFIGS = [triton.Config({"BLOCK_M": 16, "BLOCK_N": 256}, num_warps=4)]
