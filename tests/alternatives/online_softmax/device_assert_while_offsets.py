"""tl.device_assert on the row length, then a while loop over the column offset (the sum and max carried as
0-d tensors), natural exp through tl.extra.cuda.libdevice.exp, the second pass dividing by the sum with
tl.fdiv."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    tl.device_assert(N > 0, "empty row")
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * stride_xm
    m = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    s = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    start = 0
    while start < N:
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * libdevice.exp(m - m_new) + tl.sum(libdevice.exp(x - m_new), axis=0)
        m = m_new
        start += BLOCK_N
    start = 0
    while start < N:
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        y = tl.fdiv(libdevice.exp(x - m), tl.broadcast_to(s, (BLOCK_N,)))
        tl.store(out_ptr + row * stride_om + cols, y.to(out_ptr.dtype.element_ty), mask=cols < N)
        start += BLOCK_N
