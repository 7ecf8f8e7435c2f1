"""Online softmax with a running max and sum per lane (vectors of BLOCK_N), merged into the row's max and sum
only after the loop; lanes that have seen nothing but padding are guarded so -inf - -inf never makes a NaN."""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * stride_xm
    m_vec = tl.full([BLOCK_N], float("-inf"), tl.float32)
    l_vec = tl.zeros([BLOCK_N], tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        x = tl.load(x_row + start + offs, mask=start + offs < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_vec, x)
        seen = m_new > float("-inf")
        alpha = tl.where(seen, tl.exp(m_vec - m_new), 0.0)
        l_vec = l_vec * alpha + tl.where(seen, tl.exp(x - m_new), 0.0)
        m_vec = m_new
    m = tl.max(m_vec, axis=0)
    # lanes with m_vec = -inf have l_vec = 0 and exp(-inf - m) = 0
    l = tl.sum(l_vec * tl.exp(m_vec - m), axis=0)
    o_row = out_ptr + row * stride_om
    for start in tl.range(0, N, BLOCK_N):
        mask = start + offs < N
        x = tl.load(x_row + start + offs, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(o_row + start + offs, tl.exp(x - m) / l, mask=mask)
