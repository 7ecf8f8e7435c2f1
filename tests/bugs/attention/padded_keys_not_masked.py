"""Keys past the end of the sequence are not set to -inf: they get weight in the softmax.

expect: mismatch
"""
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + z * stride_z + rows[:, None] * stride_n + dims[None, :], mask=rows[:, None] < N, other=0.0)
    # Running max m, running sum l and the unnormalised output acc, per query row, in float32.
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start in range(0, N, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kv_offsets = z * stride_z + keys[:, None] * stride_n + dims[None, :]
        k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N, other=0.0)
        scores = tl.dot(q, tl.trans(k)) * sm_scale
        # Keys past the end get -inf: their weight exp(-inf) is exactly 0.
        m_new = tl.maximum(m, tl.max(scores, axis=1))
        alpha = tl.exp(m - m_new)  # rescales what was accumulated against the old max
        p = tl.exp(scores - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    out = acc / l[:, None]
    tl.store(o_ptr + z * stride_z + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N)
