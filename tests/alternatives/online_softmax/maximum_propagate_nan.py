"""Online softmax in one sweep plus a write sweep, the running maximum taken with
tl.maximum(..., propagate_nan=tl.PropagateNan.ALL) so that a NaN in the input row shows up as NaN in its output
(as torch.softmax does) instead of being skipped by the max."""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    offs = tl.arange(0, BLOCK_N)
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)
        # lanes that have seen nothing but padding keep m = -inf and s = 0
        alpha = tl.where(m_new == float("-inf"), 1.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    denom = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        tl.store(o_row + cols, (tl.exp(x - row_max) / denom).to(out_ptr.dtype.element_ty), mask=cols < N)
