"""Causal flash attention: query tiles scheduled longest-first (the last query tile on program 0), a jit helper
run twice with a constexpr MASK flag: the off-diagonal tiles without masks, then the tiles that touch the
diagonal (and the end of the sequence) with them; exp2 with log2(e) folded into the scale."""
import triton
import triton.language as tl


@triton.jit
def _inner(acc, l_i, m_i, q, k_ptr, v_ptr, base, stride_n, offs_m, lo, hi, N, qk_scale,
           HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        if MASK:
            k = tl.load(k_ptr + base + cols[:, None] * stride_n + d[None, :], mask=cols[:, None] < N, other=0.0)
            v = tl.load(v_ptr + base + cols[:, None] * stride_n + d[None, :], mask=cols[:, None] < N, other=0.0)
        else:
            k = tl.load(k_ptr + base + cols[:, None] * stride_n + d[None, :])
            v = tl.load(v_ptr + base + cols[:, None] * stride_n + d[None, :])
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        if MASK:
            qk = tl.where((offs_m[:, None] >= cols[None, :]) & (cols[None, :] < N), qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + d[None, :], mask=offs_m[:, None] < N, other=0.0)
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # key tiles entirely below the first query row of this tile, and entirely inside the sequence
    lo_diag = tl.minimum(start_m * BLOCK_M, N) // BLOCK_N * BLOCK_N
    acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, base, stride_n, offs_m, 0, lo_diag, N, qk_scale,
                           HEAD_DIM, BLOCK_N, False)
    hi = tl.minimum((start_m + 1) * BLOCK_M, N)
    acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, base, stride_n, offs_m, lo_diag, hi, N, qk_scale,
                           HEAD_DIM, BLOCK_N, True)
    tl.store(o_ptr + base + offs_m[:, None] * stride_n + d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)
