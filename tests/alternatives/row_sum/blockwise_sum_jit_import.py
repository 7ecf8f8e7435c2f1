"""Row sum with `from triton import jit`, a scalar float32 running total fed by tl.sum(..., dtype=tl.float32)
on every block, a mask that combines the column test with a row test against tl.num_programs(0), and a
helper for the block's pointers."""
import torch
import triton.language as tl
from triton import jit


@jit
def _block_ptrs(base, start, stride, BLOCK: tl.constexpr):
    cols = start + tl.arange(0, BLOCK)
    return base + cols * stride, cols


@jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * stride_m
    total = tl.zeros([], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        ptrs, cols = _block_ptrs(base, start, stride_n, BLOCK_N)
        mask = (cols < N) & (row < tl.num_programs(0))
        x = tl.load(ptrs, mask=mask, other=0.0)
        total += tl.sum(x, axis=0, dtype=tl.float32)
    tl.store(out_ptr + row, total)


def row_sum(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.size(0), dtype=torch.float32, device=x.device)
    row_sum_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), x.stride(1), BLOCK_N=1024)
    return out
