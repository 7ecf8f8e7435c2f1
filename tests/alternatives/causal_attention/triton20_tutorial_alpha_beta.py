"""The Triton 2.0 fused-attention tutorial's forward kernel: per-tile max m_ij and sum l_ij merged into the running
ones with alpha = exp(m_i - m_new) and beta = exp(m_ij - m_new), the accumulator renormalised every tile, an
additive 0/-inf causal bias; changed for the course's signature (shared strides, no head axis, no TMP/L/M
buffers), with masked loads, the loop bound min((start_m + 1) * BLOCK_M, N) and the tile max floored at -1e30 so
that a row that sees none of a tile's keys (BLOCK_M > BLOCK_N) gets weight 0 there instead of NaN."""
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
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    # load q: it will stay in SRAM throughout
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    # loop over k, v and update accumulator
    for start_n in range(0, tl.minimum((start_m + 1) * BLOCK_M, N_CTX), BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # -- compute qk ----
        k = tl.load(k_ptrs + start_n * stride_qm, mask=(start_n + offs_n)[:, None] < N_CTX, other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        qk += tl.dot(q, tl.trans(k))
        qk *= sm_scale
        qk += tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), 0, float("-inf"))
        # -- compute m_ij, p, l_ij
        m_ij = tl.maximum(tl.max(qk, 1), -1.0e30)
        p = tl.exp(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i
        m_i_new = tl.maximum(m_i, m_ij)
        alpha = tl.exp(m_i - m_i_new)
        beta = tl.exp(m_ij - m_i_new)
        l_i_new = alpha * l_i + beta * l_ij
        # -- update output accumulator --
        # scale p
        p_scale = beta / l_i_new
        p = p * p_scale[:, None]
        # scale acc
        acc_scale = l_i / l_i_new * alpha
        acc = acc * acc_scale[:, None]
        # update acc
        v = tl.load(v_ptrs + start_n * stride_qm, mask=(start_n + offs_n)[:, None] < N_CTX, other=0.0)
        p = p.to(v.dtype)
        acc += tl.dot(p, v)
        # update m_i and l_i
        l_i = l_i_new
        m_i = m_i_new
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
        causal_attention_kernel[grid](
            q, k, v, o,
            q.shape[1],
            q.stride(0), q.stride(1),
            sm_scale,
            BLOCK_DMODEL=Lk, BLOCK_M=BLOCK, BLOCK_N=BLOCK,
            num_warps=4,
            num_stages=1,
        )
        return o


attention = _attention.apply


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    Z, N_CTX, D_HEAD = 3, 1024, 64
    q = torch.empty((Z, N_CTX, D_HEAD), dtype=torch.float16, device=DEVICE).normal_(mean=0.1, std=0.2)
    k = torch.empty((Z, N_CTX, D_HEAD), dtype=torch.float16, device=DEVICE).normal_(mean=0.4, std=0.2)
    v = torch.empty((Z, N_CTX, D_HEAD), dtype=torch.float16, device=DEVICE).normal_(mean=0.3, std=0.2)
    sm_scale = 0.2
    M = torch.tril(torch.ones((N_CTX, N_CTX), device=DEVICE))
    p = torch.matmul(q, k.transpose(1, 2)) * sm_scale
    p[:, M == 0] = float("-inf")
    p = torch.softmax(p.float(), dim=-1).half()
    ref_out = torch.matmul(p, v)
    tri_out = attention(q, k, v, sm_scale)
    torch.testing.assert_close(ref_out, tri_out, atol=1e-2, rtol=0)
    print("ok")
