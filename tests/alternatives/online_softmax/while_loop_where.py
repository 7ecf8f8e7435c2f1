"""Online softmax written with while loops, masked loads without other= followed by tl.where(mask, x, NEG_INF),
and a mask combining the column test with a scalar row test; NEG_INF = tl.constexpr(float("-inf"))."""
import triton
import triton.language as tl

NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    m = tl.full([], NEG_INF, tl.float32)
    s = tl.full([], 0.0, tl.float32)
    start = 0
    while start < N:
        cols = start + offs
        mask = (cols < N) & (row >= 0)
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask)
        x = tl.where(mask, x.to(tl.float32), NEG_INF)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
        start += BLOCK_N
    start = 0
    while start < N:
        cols = start + offs
        mask = (cols < N) & (row >= 0)
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask)
        y = tl.exp(tl.where(mask, x.to(tl.float32), NEG_INF) - m) / s
        tl.store(out_ptr + row * stride_om + cols, y, mask=mask)
        start += BLOCK_N
