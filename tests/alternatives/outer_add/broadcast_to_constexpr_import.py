"""Explicit broadcasting with tl.broadcast_to and tl.expand_dims instead of [:, None] indexing, with
`from triton.language import constexpr` annotations and the result cast to the loaded x.dtype."""
import torch
import triton
import triton.language as tl
from triton.language import constexpr


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: constexpr, BLOCK_N: constexpr):
    i = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    j = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    xi = tl.load(x_ptr + i, mask=i < M, other=0.0)
    yj = tl.load(y_ptr + j, mask=j < N, other=0.0)
    col = tl.broadcast_to(tl.expand_dims(xi, 1), (BLOCK_M, BLOCK_N))
    row = tl.broadcast_to(tl.expand_dims(yj, 0), (BLOCK_M, BLOCK_N))
    ii = tl.broadcast_to(tl.expand_dims(i, 1), (BLOCK_M, BLOCK_N))
    jj = tl.broadcast_to(tl.expand_dims(j, 0), (BLOCK_M, BLOCK_N))
    tl.store(out_ptr + ii * N + jj, (col + row).to(xi.dtype), mask=(ii < M) & (jj < N))


if __name__ == "__main__":
    x = torch.arange(5, dtype=torch.float32)
    y = torch.arange(3, dtype=torch.float32) * 10
    out = torch.empty(5, 3)
    outer_add_kernel[(1, 1)](x, y, out, 5, 3, BLOCK_M=8, BLOCK_N=4)
    print(out)
