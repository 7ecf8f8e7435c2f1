"""The tile's columns are processed in sub-tiles whose count is derived with a shift by a module-level
constant (`BLOCK_N >> LOG2_SUB_N`, LOG2_SUB_N = tl.constexpr(3)), unrolled with tl.static_range."""
import torch
import triton
import triton.language as tl

LOG2_SUB_N = tl.constexpr(3)  # sub-tiles of 8 columns


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    NUM_SUB: tl.constexpr = BLOCK_N >> LOG2_SUB_N
    SUB_N: tl.constexpr = BLOCK_N // NUM_SUB
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    for s in tl.static_range(NUM_SUB):
        cols = tl.program_id(1) * BLOCK_N + s * SUB_N + tl.arange(0, SUB_N)
        y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(out_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :], mask=mask)


if __name__ == "__main__":
    x = torch.randn(37, device="cuda")
    y = torch.randn(50, device="cuda")
    out = torch.empty(37, 50, device="cuda")
    outer_add_kernel[(triton.cdiv(37, 16), triton.cdiv(50, 32))](x, y, out, 37, 50, BLOCK_M=16, BLOCK_N=32)
    torch.testing.assert_close(out, x[:, None] + y[None, :])
