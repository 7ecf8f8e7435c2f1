"""Softmax whose row block is walked in CHUNKS sub-blocks with tl.static_range (CHUNKS = tl.constexpr(2**3)
capped by the block), an online max/sum over the chunks, then a second static loop that writes; pointers are
advanced in place."""
import torch
import triton
import triton.language as tl

CHUNKS = tl.constexpr(2**3)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    SUB: tl.constexpr = BLOCK_N // CHUNKS if BLOCK_N >= 16 * CHUNKS else BLOCK_N
    STEPS: tl.constexpr = BLOCK_N // SUB
    row = tl.program_id(0)
    offs = tl.arange(0, SUB)
    m = tl.max(tl.full([SUB], float("-inf"), tl.float32), axis=0)
    s = tl.sum(tl.zeros([SUB], tl.float32), axis=0)
    p = x_ptr + row * stride_xm + offs
    for c in tl.static_range(STEPS):
        mask = c * SUB + offs < N
        x = tl.load(p, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.where(mask, tl.exp(x - m_new), 0.0), axis=0)
        m = m_new
        p += SUB
    p = x_ptr + row * stride_xm + offs
    q = out_ptr + row * stride_om + offs
    for c in tl.static_range(STEPS):
        mask = c * SUB + offs < N
        x = tl.load(p, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(q, tl.exp(x - m) / s, mask=mask)
        p += SUB
        q += SUB


if __name__ == "__main__":
    x = torch.randn(64, 1000, device="cuda")
    y = torch.empty_like(x)
    softmax_kernel[(64,)](x, y, 1000, x.stride(0), y.stride(0), BLOCK_N=1024)
    torch.testing.assert_close(y, torch.softmax(x, 1))
