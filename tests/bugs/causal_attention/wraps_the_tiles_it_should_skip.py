"""Visits every key tile of the row and wraps those above the diagonal onto the visible ones, in order, masking
their scores off: right values, nothing new loaded, the visible tiles swept again and again with one load, and the
work of a kernel that skips nothing.

expect: excess_loads
"""
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(1)
    block = tl.program_id(0)
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    base = z * stride_z
    q = tl.load(q_ptr + base + rows[:, None] * stride_n + dims[None, :], mask=rows[:, None] < N, other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    visible = tl.cdiv(tl.minimum((block + 1) * BLOCK_M, N), BLOCK_N)
    for tile in range(0, tl.cdiv(N, BLOCK_N)):
        keys = (tile % visible) * BLOCK_N + tl.arange(0, BLOCK_N)
        offs = base + keys[:, None] * stride_n + dims[None, :]
        k = tl.load(k_ptr + offs, mask=keys[:, None] < N, other=0.0)
        v = tl.load(v_ptr + offs, mask=keys[:, None] < N, other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        keep = (keys[None, :] <= rows[:, None]) & (keys[None, :] < N) & (tile < visible)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    out = acc / l[:, None]
    tl.store(o_ptr + base + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N)
