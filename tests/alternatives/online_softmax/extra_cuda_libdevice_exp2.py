"""Online softmax with CUDA's libdevice through its full path (from triton.language.extra.cuda import libdevice) for exp2;
the running state is scalars, the exponent in base 2."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

RCP_LN2 = tl.constexpr(1.4426950408889634)


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    m = -float("inf")
    d = 0.0
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32) * RCP_LN2
        m_new = tl.maximum(m, tl.max(x, 0))
        d = d * libdevice.exp2(m - m_new) + tl.sum(libdevice.exp2(x - m_new), 0)
        m = m_new
    inv = 1.0 / d
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32) * RCP_LN2
        tl.store(o_row + cols, (libdevice.exp2(x - m) * inv).to(out_ptr.dtype.element_ty), mask=cols < N)
