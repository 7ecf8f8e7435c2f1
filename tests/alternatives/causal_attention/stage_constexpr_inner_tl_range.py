"""Triton tutorial 06's STAGE structure: an _attn_fwd_inner helper called with STAGE=1 for the key tiles
strictly before the diagonal block (no mask) and STAGE=2 for the diagonal band (causal + end-of-sequence
mask); lo/hi computed in the helper with tl.multiple_of; tl.range with num_stages; exp2 with the scale in log2
units; and the finite mask value -1.0e6 the tutorial uses."""
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_n, start_m, qk_scale, N,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    offs_m, offs_n, offs_d):
    if STAGE == 1:
        lo, hi = 0, (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
    else:
        lo = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
        hi = tl.minimum((start_m + 1) * BLOCK_M, N)
        lo = tl.multiple_of(lo, BLOCK_N)
    for start_n in tl.range(lo, hi, BLOCK_N, num_stages=2):
        keys = start_n + offs_n
        k = tl.load(k_base + keys[:, None] * stride_n + offs_d[None, :], mask=keys[:, None] < N, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        if STAGE == 2:
            mask = (offs_m[:, None] >= keys[None, :]) & (keys[None, :] < N)
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + keys[:, None] * stride_n + offs_d[None, :], mask=keys[:, None] < N, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off = tl.program_id(1).to(tl.int64) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0e-30
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(q_ptr + off + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptr + off, v_ptr + off, stride_n, start_m, qk_scale, N,
                                    BLOCK_M, HEAD_DIM, BLOCK_N, 1, offs_m, offs_n, offs_d)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptr + off, v_ptr + off, stride_n, start_m, qk_scale, N,
                                    BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, offs_d)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + off + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)
