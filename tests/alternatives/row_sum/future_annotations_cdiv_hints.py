"""Row sum in a module with `from __future__ import annotations` (so tl.constexpr is a string annotation), a
loop over tl.cdiv(N, BLOCK_N) block indices, tl.multiple_of / tl.max_contiguous hints and an eviction policy."""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    """out[row] = sum(x[row, :]), accumulated in float32."""
    row = tl.program_id(axis=0)
    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK_N), BLOCK_N), BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for i in range(tl.cdiv(N, BLOCK_N)):
        cols = i * BLOCK_N + offs
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0,
                    eviction_policy="evict_first")
        acc += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sum(x: torch.Tensor, block_n: int = 1024) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty(m, dtype=torch.float32, device=x.device)
    row_sum_kernel[(m,)](x, out, n, x.stride(0), x.stride(1), BLOCK_N=block_n)
    return out
