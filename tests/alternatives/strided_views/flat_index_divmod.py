"""The tile addressed through one flat arange of BLOCK_M * BLOCK_N lanes split into (row, column) with //
and %, instead of two broadcast aranges."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    lane = tl.arange(0, BLOCK_M * BLOCK_N)
    row = tl.program_id(0) * BLOCK_M + lane // BLOCK_N
    col = tl.program_id(1) * BLOCK_N + lane % BLOCK_N
    mask = (row < M) & (col < N)
    ptrs = x_ptr + row * stride_m + col * stride_n
    x = tl.load(ptrs, mask=mask, other=0.0)
    tl.store(ptrs, x + 1, mask=mask)
