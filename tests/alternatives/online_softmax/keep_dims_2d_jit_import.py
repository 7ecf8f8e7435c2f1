"""Online softmax on [1, BLOCK_N] tiles with keep_dims reductions ([1, 1] running statistics), `from triton
import jit`, module-level ACC_DTYPE = tl.float32 and NEG_INF = tl.constexpr(float("-inf")), and a
@triton.constexpr_function checked by tl.static_assert."""
import torch
import triton
import triton.language as tl
from triton import jit

ACC_DTYPE = tl.float32
NEG_INF = tl.constexpr(float("-inf"))


@triton.constexpr_function
def is_power_of_2(n):
    return n > 0 and (n & (n - 1)) == 0


@jit
def _tile(base, rows, cols, stride, N):
    mask = (rows >= 0) & (cols < N)
    return tl.load(base + rows * stride + cols, mask=mask, other=NEG_INF).to(ACC_DTYPE), mask


@jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    tl.static_assert(is_power_of_2(BLOCK_N), "BLOCK_N must be a power of 2")
    rows = tl.program_id(0) + tl.arange(0, 1)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    m = tl.full([1, 1], NEG_INF, ACC_DTYPE)
    s = tl.zeros([1, 1], dtype=ACC_DTYPE)
    for start in tl.range(0, N, BLOCK_N):
        x, _ = _tile(x_ptr, rows, start + cols, stride_xm, N)
        m_new = tl.maximum(m, tl.max(x, axis=1, keep_dims=True))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=1, keep_dims=True)
        m = m_new
    for start in tl.range(0, N, BLOCK_N):
        x, mask = _tile(x_ptr, rows, start + cols, stride_xm, N)
        tl.store(out_ptr + rows * stride_om + start + cols, tl.exp(x - m) / s, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    online_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK_N=1024)
    return out
