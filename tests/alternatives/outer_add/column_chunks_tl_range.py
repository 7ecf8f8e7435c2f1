"""A loop over the tile's columns in chunks of 8 with tl.range, the output pointers advanced by
`out_ptrs += CHUNK` and the y pointers alongside; the chunk mask combines row and column comparisons."""
import triton
import triton.language as tl

CHUNK = tl.constexpr(8)


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    col0 = tl.program_id(1) * BLOCK_N
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    cols = col0 + tl.arange(0, CHUNK)
    y_ptrs = y_ptr + cols
    out_ptrs = out_ptr + rows[:, None] * N + cols[None, :]
    for _ in tl.range(0, BLOCK_N, CHUNK):
        y = tl.load(y_ptrs, mask=cols < N, other=0.0)
        tl.store(out_ptrs, x[:, None] + y[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N))
        y_ptrs += CHUNK
        out_ptrs += CHUNK
        cols += CHUNK
