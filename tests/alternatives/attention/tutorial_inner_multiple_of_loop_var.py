"""Triton tutorial 06's forward inner loop, as published: `for start_n in tl.range(lo, hi, BLOCK_N):
start_n = tl.multiple_of(start_n, BLOCK_N)`, K and V pointers advanced through the offsets, m_ij from
tl.max(qk, 1) * qk_scale, p = exp2(qk * qk_scale - m_ij), alpha = exp2(m_i - m_ij), and l_i initialised to 1.0
as the tutorial does (the first alpha is 0, which wipes it). The key tail masked with -1.0e6 bias."""
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_n, qk_scale, N,
                    BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, offs_n, offs_d):
    lo, hi = 0, N
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        keys = start_n + offs_n
        k = tl.load(k_base + keys[:, None] * stride_n + offs_d[None, :], mask=keys[:, None] < N, other=0.0)
        qk = tl.dot(q, k.T)
        qk = qk + tl.where(keys[None, :] < N, 0.0, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_base + keys[:, None] * stride_n + offs_d[None, :], mask=keys[:, None] < N, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1).to(tl.int64) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(q_ptr + off_z + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptr + off_z, v_ptr + off_z, stride_n, qk_scale, N,
                                    BLOCK_N, HEAD_DIM, offs_n, offs_d)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + off_z + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)
