"""@triton.jit helpers for the tile's indices, its bounds mask and its row-major pointers, with row offsets
promoted to int64 before multiplying by N so large outputs cannot overflow int32."""
import triton
import triton.language as tl


@triton.jit
def tile_indices(pid, BLOCK: tl.constexpr):
    return pid * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def tile_mask(rows, cols, n_rows, n_cols):
    return (rows[:, None] < n_rows) & (cols[None, :] < n_cols)


@triton.jit
def row_major_ptrs(base, rows, cols, row_stride):
    return base + rows.to(tl.int64)[:, None] * row_stride + cols[None, :]


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tile_indices(tl.program_id(0), BLOCK_M)
    cols = tile_indices(tl.program_id(1), BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    tl.store(row_major_ptrs(out_ptr, rows, cols, N), x[:, None] + y[None, :], mask=tile_mask(rows, cols, M, N))
