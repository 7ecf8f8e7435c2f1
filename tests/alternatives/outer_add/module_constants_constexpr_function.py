"""Module-level constants (`import torch, math`, `from math import log2`, tl.constexpr(1),
tl.constexpr(2**3), tl.constexpr(math.log2(math.e)), tl.constexpr(float("-inf"))) and a
@triton.constexpr_function that picks how many column chunks of the tile to process per iteration."""
import torch, math
from math import log2

import triton
import triton.language as tl

ONE = tl.constexpr(1)
MIN_CHUNK = tl.constexpr(2**3)
RLN2 = tl.constexpr(math.log2(math.e))
PAD = tl.constexpr(float("-inf"))
LOG2_MIN_CHUNK = tl.constexpr(int(log2(8)))


@triton.constexpr_function
def column_chunks(block_n, log2_min_chunk):
    # split wide tiles into chunks of 32 columns, but never into chunks narrower than 2**log2_min_chunk
    return max(ONE.value, block_n >> max(log2_min_chunk, 5))


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    CHUNKS: tl.constexpr = column_chunks(BLOCK_N, LOG2_MIN_CHUNK)
    CHUNK_N: tl.constexpr = BLOCK_N // CHUNKS
    tl.static_assert(CHUNK_N >= MIN_CHUNK)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    x = tl.load(x_ptr + rows, mask=row_mask, other=0.0)
    for c in tl.static_range(CHUNKS):
        cols = tl.program_id(1) * BLOCK_N + c * CHUNK_N + tl.arange(0, CHUNK_N)
        col_mask = cols < N
        # masked lanes are never stored, so the padding value does not matter
        y = tl.load(y_ptr + cols, mask=col_mask, other=PAD)
        tl.store(out_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :],
                 mask=row_mask[:, None] & col_mask[None, :])


if __name__ == "__main__":
    x, y = torch.randn(33), torch.randn(65)
    out = torch.empty(33, 65)
    outer_add_kernel[(math.ceil(33 / 16), math.ceil(65 / 32))](x, y, out, 33, 65, BLOCK_M=16, BLOCK_N=32)
    torch.testing.assert_close(out, x[:, None] + y[None, :])
    print("max error", (out - (x[:, None] + y[None, :])).abs().max().item(), "log2(e) =", RLN2)
