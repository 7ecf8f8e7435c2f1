"""The tile from tl.reshape into a column and a row, tl.broadcast_to, then tl.trans and tl.permute back; the
store's offsets from tl.expand_dims."""
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.reshape(tl.load(x_ptr + rows, mask=rows < M), (BLOCK_M, 1))
    y = tl.reshape(tl.load(y_ptr + cols, mask=cols < N), (1, BLOCK_N))
    tile = tl.broadcast_to(x, (BLOCK_M, BLOCK_N)) + y
    tile_t = tl.permute(tl.trans(tile), (1, 0))
    r = tl.expand_dims(rows, 1)
    c = tl.expand_dims(cols, 0)
    tl.store(out_ptr + r * N + c, tile_t, mask=(r < M) & (c < N))
