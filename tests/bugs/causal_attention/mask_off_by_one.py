"""keys < rows instead of keys <= rows: a query does not see itself, and the first sees nothing.

expect: nonfinite
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
    q = tl.load(q_ptr + z * stride_z + rows[:, None] * stride_n + dims[None, :], mask=rows[:, None] < N, other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # Keys after the last query row of this block are masked for every row: do not even load them.
    end = tl.minimum((block + 1) * BLOCK_M, N)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kv_offsets = z * stride_z + keys[:, None] * stride_n + dims[None, :]
        k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N, other=0.0)
        scores = tl.dot(q, tl.trans(k)) * sm_scale
        # Query i attends to key j when j <= i (the diagonal included), and only to keys that exist.
        visible = (keys[None, :] < rows[:, None]) & (keys[None, :] < N)
        scores = tl.where(visible, scores, float("-inf"))
        m_new = tl.maximum(m, tl.max(scores, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(scores - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    out = acc / l[:, None]
    tl.store(o_ptr + z * stride_z + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N)
