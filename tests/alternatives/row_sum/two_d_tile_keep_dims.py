"""Row sum written with 2-D [1, BLOCK_N] tiles (a row index column and a column index row, broadcast),
both strides applied on the tile, and tl.sum(..., keep_dims=True) down to a [1, 1] store."""
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) + tl.arange(0, 1)[:, None]  # [1, 1]
    cols = tl.arange(0, BLOCK_N)[None, :]                # [1, BLOCK_N]
    acc = tl.zeros([1, BLOCK_N], dtype=tl.float32)
    for k in range(0, N, BLOCK_N):
        mask = (rows >= 0) & (k + cols < N)
        tile = tl.load(x_ptr + rows * stride_m + (k + cols) * stride_n, mask=mask, other=0.0)
        acc += tile.to(tl.float32)
    row_total = tl.sum(acc, axis=1, keep_dims=True)      # [1, 1]
    tl.store(out_ptr + rows, row_total)


def row_sum(x):
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), BLOCK_N=128)
    return out
