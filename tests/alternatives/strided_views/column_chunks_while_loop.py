"""Each program walks its tile's columns 8 at a time in a while loop, moving a 2-D block of pointers with
`ptrs += CHUNK * stride_n`; the loop bound is a scalar, the masks combine rows and columns."""
import triton
import triton.language as tl

CHUNK = tl.constexpr(8)


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    col_start = tl.program_id(1) * BLOCK_N
    cols = col_start + tl.arange(0, CHUNK)
    ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    col_end = col_start + BLOCK_N
    while col_start < col_end:
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tile = tl.load(ptrs, mask=mask, other=0.0)
        tl.store(ptrs, tile + 1, mask=mask)
        ptrs += CHUNK * stride_n
        cols += CHUNK
        col_start += CHUNK
