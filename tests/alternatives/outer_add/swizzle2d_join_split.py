"""Programs renumbered with tl.swizzle2d (groups of 4 row tiles), then the x column and y row are broadcast
to the tile with tl.broadcast_to via tl.join/tl.split round trip: join the two broadcast tiles along a new
last axis, sum over it with tl.reduce and a custom combine."""
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     GROUP: tl.constexpr = 4):
    pid_m, pid_n = tl.swizzle2d(tl.program_id(0), tl.program_id(1), tl.num_programs(0), tl.num_programs(1), GROUP)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    xs = tl.broadcast_to(x[:, None], (BLOCK_M, BLOCK_N))
    ys = tl.broadcast_to(y[None, :], (BLOCK_M, BLOCK_N))
    pair = tl.join(xs, ys)                # [BLOCK_M, BLOCK_N, 2]
    tile = tl.reduce(pair, 2, _add)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile.to(out_ptr.dtype.element_ty), mask=mask)
