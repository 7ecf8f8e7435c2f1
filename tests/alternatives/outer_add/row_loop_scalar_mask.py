"""One row at a time: the program loads its column block of y once, then loops over its BLOCK_M rows with
tl.static_range, loading x[row] as a scalar and storing under `mask = col_mask & (row < M)`."""
import torch
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row_start = tl.program_id(0) * BLOCK_M
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    y = tl.load(y_ptr + cols, mask=col_mask, other=0.0)
    for i in tl.static_range(BLOCK_M):
        row = row_start + i
        x = tl.load(x_ptr + row, mask=row < M, other=0.0)
        mask = col_mask & (row < M)
        tl.store(out_ptr + row * N + cols, x + y, mask=mask)


if __name__ == "__main__":
    x, y = torch.randn(45), torch.randn(70)
    out = torch.full((45, 70), float("nan"))
    outer_add_kernel[(triton.cdiv(45, 8), triton.cdiv(70, 64))](x, y, out, 45, 70, BLOCK_M=8, BLOCK_N=64)
    print(torch.allclose(out, x[:, None] + y[None, :]))
