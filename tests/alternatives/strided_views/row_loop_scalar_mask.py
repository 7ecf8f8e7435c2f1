"""A loop over the tile's rows with tl.static_range: each iteration addresses one row of the view through
its row stride and masks it with `col_mask & (row < M)`, a block comparison combined with a scalar one."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row0 = tl.program_id(0) * BLOCK_M
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    col_offsets = cols * stride_n
    for r in tl.static_range(BLOCK_M):
        row = row0 + r
        mask = col_mask & (row < M)
        ptrs = x_ptr + row * stride_m + col_offsets
        vals = tl.load(ptrs, mask=mask, other=0.0)
        tl.store(ptrs, vals + 1.0, mask=mask)
