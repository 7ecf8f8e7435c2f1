"""Causal forward pass of Triton's tutorial 06 (python/tutorials/06-fused-attention.py), STAGE = 3: the off-band
tiles through `_attn_fwd_inner` with STAGE 1 and no causal mask, the on-band tiles with STAGE 2 and the tutorial's
`tl.where(mask, 0, -1.0e6)`; changed only for the course: raw pointers with one pair of shared strides instead of
block pointers, no head axis and no M output, `p.to(v.dtype)`, masks for the keys past N, and stage bounds that
hold when BLOCK_M is not a multiple of BLOCK_N (the off-band stage stops at the last whole key tile before the
query tile, the on-band stage stops at min((start_m + 1) * BLOCK_M, N))."""
import torch

import triton
import triton.language as tl

# The tutorial's STAGE: 3 for causal (what this kernel computes), 1 for full attention.
STAGE = tl.constexpr(3)


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,  #
                    K_block_ptr, V_block_ptr,  #
                    start_m, qk_scale, N_CTX, stride_tok,  #
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,  #
                    STAGE: tl.constexpr, offs_m: tl.constexpr, offs_n: tl.constexpr):
    # range of values handled by this stage
    if STAGE == 1:
        lo, hi = 0, (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
    elif STAGE == 2:
        lo, hi = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N, tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
        lo = tl.multiple_of(lo, BLOCK_N)
    # causal = False
    else:
        lo, hi = 0, N_CTX
    K_block_ptr += lo * stride_tok
    V_block_ptr += lo * stride_tok
    # loop over k, v and update accumulator
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        in_seq = (start_n + offs_n) < N_CTX
        # -- compute qk ----
        k = tl.load(K_block_ptr, mask=in_seq[None, :], other=0.0)
        qk = tl.dot(q, k)
        qk = tl.where(in_seq[None, :], qk, float("-inf"))
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update output accumulator --
        acc = acc * alpha[:, None]
        # update acc
        v = tl.load(V_block_ptr, mask=in_seq[:, None], other=0.0)
        p = p.to(v.dtype)
        acc = tl.dot(p, v, acc)
        # update m_i and l_i
        m_i = m_ij
        V_block_ptr += BLOCK_N * stride_tok
        K_block_ptr += BLOCK_N * stride_tok
    return acc, l_i, m_i


configs = [
    triton.Config({'BLOCK_M': BM, 'BLOCK_N': BN}, num_stages=s, num_warps=w) \
    for BM in [64, 128]\
    for BN in [32, 64]\
    for s in [3, 4, 7]\
    for w in [4, 8]\
]


def keep(conf):
    BLOCK_M = conf.kwargs["BLOCK_M"]
    BLOCK_N = conf.kwargs["BLOCK_N"]
    if BLOCK_M * BLOCK_N < 128 * 128 and conf.num_warps == 8:
        return False
    return True


@triton.autotune(list(filter(keep, configs)), key=["N_CTX", "HEAD_DIM"])
@triton.jit
def causal_attention_kernel(Q, K, V, Out, N_CTX,  #
                            stride_z, stride_tok, sm_scale,  #
                            HEAD_DIM: tl.constexpr,  #
                            BLOCK_M: tl.constexpr,  #
                            BLOCK_N: tl.constexpr,  #
                            ):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    qvk_offset = off_z.to(tl.int64) * stride_z

    # initialize offsets
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    # pointers (the tutorial's block pointers): K is read transposed, (HEAD_DIM, BLOCK_N)
    Q_block_ptr = Q + qvk_offset + offs_m[:, None] * stride_tok + offs_d[None, :]
    K_block_ptr = K + qvk_offset + offs_n[None, :] * stride_tok + offs_d[:, None]
    V_block_ptr = V + qvk_offset + offs_n[:, None] * stride_tok + offs_d[None, :]
    O_block_ptr = Out + qvk_offset + offs_m[:, None] * stride_tok + offs_d[None, :]
    # initialize pointer to m and l
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # load scales
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    # load q: it will stay in SRAM throughout
    q = tl.load(Q_block_ptr, mask=offs_m[:, None] < N_CTX, other=0.0)
    # stage 1: off-band
    # For causal = True, STAGE = 3 and _attn_fwd_inner gets 1 as its STAGE
    # For causal = False, STAGE = 1, and _attn_fwd_inner gets 3 as its STAGE
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr,  #
                                        start_m, qk_scale, N_CTX, stride_tok,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        4 - STAGE, offs_m, offs_n  #
                                        )
    # stage 2: on-band
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr,  #
                                        start_m, qk_scale, N_CTX, stride_tok,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        2, offs_m, offs_n  #
                                        )
    # epilogue
    acc = acc / l_i[:, None]
    tl.store(O_block_ptr, acc.to(Out.type.element_ty), mask=offs_m[:, None] < N_CTX)


def causal_attention(q, k, v, sm_scale):
    # shape constraints
    HEAD_DIM_Q, HEAD_DIM_K = q.shape[-1], k.shape[-1]
    HEAD_DIM_V = v.shape[-1]
    assert HEAD_DIM_Q == HEAD_DIM_K and HEAD_DIM_K == HEAD_DIM_V
    assert q.stride() == k.stride() == v.stride() and q.stride(-1) == 1
    o = torch.empty_like(q)
    Z, N_CTX = q.shape[0], q.shape[1]
    grid = lambda args: (triton.cdiv(N_CTX, args["BLOCK_M"]), Z, 1)
    causal_attention_kernel[grid](q, k, v, o, N_CTX, q.stride(0), q.stride(1), sm_scale, HEAD_DIM=HEAD_DIM_K)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    torch.manual_seed(20)
    Z, N_CTX, HEAD_DIM = 4, 1000, 64
    q = torch.empty((Z, N_CTX, HEAD_DIM), dtype=torch.float16, device=DEVICE).normal_(mean=0.0, std=0.5)
    k = torch.empty((Z, N_CTX, HEAD_DIM), dtype=torch.float16, device=DEVICE).normal_(mean=0.0, std=0.5)
    v = torch.empty((Z, N_CTX, HEAD_DIM), dtype=torch.float16, device=DEVICE).normal_(mean=0.0, std=0.5)
    sm_scale = 0.5
    p = torch.matmul(q, k.transpose(1, 2)).float() * sm_scale
    M = torch.tril(torch.ones((N_CTX, N_CTX), device=DEVICE))
    p[:, M == 0] = float("-inf")
    ref_out = torch.matmul(torch.softmax(p, dim=-1).half(), v)
    tri_out = causal_attention(q, k, v, sm_scale)
    torch.testing.assert_close(tri_out, ref_out, atol=1e-2, rtol=0)
    print("ok")
