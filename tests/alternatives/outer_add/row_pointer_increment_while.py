"""Row loop with pointer increments: the output row pointers advance by `out_ptrs += N` and the x pointer
by one each iteration of a while loop bounded by both BLOCK_M and the rows left."""
import torch
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    first_row = tl.program_id(0) * BLOCK_M
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    y = tl.load(y_ptr + cols, mask=col_mask, other=0.0)

    x_ptrs = x_ptr + first_row
    out_ptrs = out_ptr + first_row * N + cols
    last_row = tl.minimum(first_row + BLOCK_M, M)
    row = first_row
    while row < last_row:
        x = tl.load(x_ptrs)
        tl.store(out_ptrs, x + y, mask=col_mask)
        x_ptrs += 1
        out_ptrs += N
        row += 1


def outer_add(x, y, BLOCK_M=32, BLOCK_N=128):
    M, N = x.numel(), y.numel()
    out = torch.empty(M, N, dtype=x.dtype, device=x.device)
    outer_add_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](x, y, out, M, N, BLOCK_M, BLOCK_N)
    return out
