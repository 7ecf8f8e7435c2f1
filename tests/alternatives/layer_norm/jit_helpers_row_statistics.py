"""Layer norm split into @jit helpers (`from triton import jit`): a masked block loader, a row-statistics helper
returning (mean, rstd) from a two-pass variance, and module-level constants for the accumulation type."""
import math

import torch
import triton
import triton.language as tl
from triton import jit

ACC_DTYPE = tl.float32
ZERO = tl.constexpr(0.0)


@jit
def _load_block(base, start, n, BLOCK: tl.constexpr):
    idx = start + tl.arange(0, BLOCK)
    return tl.load(base + idx, mask=idx < n, other=ZERO).to(ACC_DTYPE), idx


@jit
def _row_statistics(base, n, eps, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=ACC_DTYPE)
    for start in range(0, n, BLOCK):
        x, _ = _load_block(base, start, n, BLOCK)
        acc += x
    mean = tl.sum(acc, axis=0) / n
    acc = tl.zeros([BLOCK], dtype=ACC_DTYPE)
    for start in range(0, n, BLOCK):
        x, idx = _load_block(base, start, n, BLOCK)
        d = tl.where(idx < n, x - mean, ZERO)
        acc += d * d
    return mean, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)


@jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    mean, rstd = _row_statistics(x_row, N, eps, BLOCK_N)
    for start in range(0, N, BLOCK_N):
        x, idx = _load_block(x_row, start, N, BLOCK_N)
        w, _ = _load_block(w_ptr, start, N, BLOCK_N)
        b, _ = _load_block(b_ptr, start, N, BLOCK_N)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + row * stride_om + idx, y.to(out_ptr.dtype.element_ty), mask=idx < N)


def layer_norm(x, weight, bias, eps=1e-5):
    shape = x.shape
    x2 = x.reshape(math.prod(shape[:-1]), shape[-1])
    out = torch.empty_like(x2)
    layer_norm_kernel[(x2.shape[0],)](x2, weight, bias, out, x2.shape[1], x2.stride(0), out.stride(0), eps,
                                      BLOCK_N=min(2048, triton.next_power_of_2(x2.shape[1])))
    return out.view(shape)
