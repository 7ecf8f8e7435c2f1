"""The Triton 2.1 fused-attention tutorial's causal forward kernel (m_prev/l_prev, natural exp, the accumulator
kept normalised by `l_rcp` after every key tile, pointers advanced with `+=`, its loop bound `(start_m + 1) *
BLOCK_M` and its `tl.where(offs_m >= start_n + offs_n, qk, -inf)` as the only score mask: it already hides the
keys past the end from every real row), changed for the course's signature and shared strides, without the L/M
outputs, with K and V loads masked past the end of the sequence."""
import torch

import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(
    Q, K, V, Out,
    N_CTX,
    stride_qz, stride_qm,
    sm_scale,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    # initialize offsets
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    off_q = off_z * stride_qz + offs_m[:, None] * stride_qm + offs_d[None, :]
    off_k = off_z * stride_qz + offs_n[:, None] * stride_qm + offs_d[None, :]
    off_v = off_z * stride_qz + offs_n[:, None] * stride_qm + offs_d[None, :]
    # Initialize pointers to Q, K, V
    q_ptrs = Q + off_q
    k_ptrs = K + off_k
    v_ptrs = V + off_v
    # initialize pointer to m and l
    m_prev = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_prev = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    # load q: it will stay in SRAM throughout
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    # loop over k, v and update accumulator
    for start_n in range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
        # -- compute qk ----
        k = tl.load(k_ptrs, mask=(start_n + offs_n)[:, None] < N_CTX, other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        qk += tl.dot(q, tl.trans(k))
        qk *= sm_scale
        qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        # compute new m
        m_curr = tl.maximum(tl.max(qk, 1), m_prev)
        # correct old l
        l_prev *= tl.exp(m_prev - m_curr)
        # attention weights
        p = tl.exp(qk - m_curr[:, None])
        l_curr = tl.sum(p, 1) + l_prev
        # rescale operands of matmuls
        l_rcp = 1. / l_curr
        p *= l_rcp[:, None]
        acc *= (l_prev * l_rcp)[:, None]
        # update acc
        p = p.to(Q.dtype.element_ty)
        v = tl.load(v_ptrs, mask=(start_n + offs_n)[:, None] < N_CTX, other=0.0)
        acc += tl.dot(p, v)
        # update m_i and l_i
        l_prev = l_curr
        m_prev = m_curr
        # update pointers
        k_ptrs += BLOCK_N * stride_qm
        v_ptrs += BLOCK_N * stride_qm
    # initialize pointers to output
    off_o = off_z * stride_qz + offs_m[:, None] * stride_qm + offs_d[None, :]
    out_ptrs = Out + off_o
    tl.store(out_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


class _attention(torch.autograd.Function):

    @staticmethod
    def forward(ctx, q, k, v, sm_scale):
        BLOCK = 128
        # shape constraints
        Lq, Lk, Lv = q.shape[-1], k.shape[-1], v.shape[-1]
        assert Lq == Lk and Lk == Lv
        assert Lk in {16, 32, 64, 128}
        o = torch.empty_like(q)
        grid = (triton.cdiv(q.shape[1], BLOCK), q.shape[0], 1)
        num_warps = 4 if Lk <= 64 else 8
        causal_attention_kernel[grid](
            q, k, v, o,
            q.shape[1],
            q.stride(0), q.stride(1),
            sm_scale,
            BLOCK_DMODEL=Lk, BLOCK_M=BLOCK, BLOCK_N=BLOCK,
            num_warps=num_warps,
            num_stages=2,
        )
        return o


attention = _attention.apply


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    torch.manual_seed(20)
    q = torch.empty((6, 1000, 64), dtype=torch.float16, device=DEVICE).normal_(mean=0.1, std=0.2)
    k = torch.empty((6, 1000, 64), dtype=torch.float16, device=DEVICE).normal_(mean=0.4, std=0.2)
    v = torch.empty((6, 1000, 64), dtype=torch.float16, device=DEVICE).normal_(mean=0.3, std=0.2)
    sm_scale = 0.3
    M = torch.tril(torch.ones((1000, 1000), device=DEVICE))
    p = torch.matmul(q, k.transpose(1, 2)) * sm_scale
    p[:, M == 0] = float("-inf")
    p = torch.softmax(p.float(), dim=-1).half()
    ref_out = torch.matmul(p, v)
    tri_out = attention(q, k, v, sm_scale)
    assert torch.allclose(ref_out, tri_out, atol=1e-2, rtol=0)
    print("ok")
