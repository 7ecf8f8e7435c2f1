"""Causal attention as a two-pass softmax written once: `tl.static_range(2)` runs the same sweep over the visible
key tiles twice, the first pass finding each row's max and exp-sum, the second adding the normalised weights
times V. The same `tl.load` of K loads every visible tile twice, in the same order; no tile above the diagonal."""
import torch
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(Q, K, V, Out, seq_len, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    for phase in tl.static_range(2):
        for start_n in range(0, hi, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            # K^T, a (HEAD_DIM, BLOCK_N) tile read down the rows of K
            kt = tl.load(K + base + offs_n[None, :] * stride_n + offs_d[:, None], mask=offs_n[None, :] < seq_len,
                         other=0.0)
            qk = tl.dot(q, kt) * sm_scale
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
            if phase == 0:
                m_new = tl.maximum(m_i, tl.max(qk, 1))
                l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(qk - m_new[:, None]), 1)
                m_i = m_new
            else:
                p = tl.exp(qk - m_i[:, None]) / l_i[:, None]
                v = tl.load(V + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=offs_n[:, None] < seq_len,
                            other=0.0)
                acc += tl.dot(p.to(v.dtype), v)
    tl.store(Out + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(Out.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


def causal_attention(q, k, v, block_m=32, block_n=32):
    batch, seq_len, head_dim = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, block_m), batch)
    causal_attention_kernel[grid](q, k, v, o, seq_len, q.stride(0), q.stride(1), head_dim ** -0.5,
                                  HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
    return o
