"""Forward kernel in the style of the flash-attn package's Triton implementation (flash_attn_triton.py): a running
log-sum-exp `lse_i` next to the running max, natural `tl.exp`/`tl.log`, additive -inf masks, and an
`@triton.heuristics` EVEN_N parameter (appended last) that drops the key masks when N is a multiple of BLOCK_N,
autotuned over a list comprehension of configs."""
import math

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
             for bm in (64, 128) for bn in (32, 64) for w in (4, 8) for s in (2, 3)],
    key=["seqlen", "headdim"],
)
@triton.heuristics({"EVEN_N": lambda args: args["seqlen"] % args["BLOCK_N"] == 0})
@triton.jit
def attention_kernel(
    Q, K, V, Out,
    seqlen,
    stride_b, stride_m,
    softmax_scale,
    headdim: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EVEN_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_b = tl.program_id(1)
    # initialize offsets
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, headdim)
    q_ptrs = Q + off_b * stride_b + (offs_m[:, None] * stride_m + offs_d[None, :])
    k_ptrs = K + off_b * stride_b + (offs_n[:, None] * stride_m + offs_d[None, :])
    v_ptrs = V + off_b * stride_b + (offs_n[:, None] * stride_m + offs_d[None, :])
    # initialize pointer to m and l
    lse_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    acc_o = tl.zeros([BLOCK_M, headdim], dtype=tl.float32)
    # load q: it will stay in SRAM throughout
    q = tl.load(q_ptrs, mask=offs_m[:, None] < seqlen, other=0.0)
    # loop over k, v and update accumulator
    for start_n in range(0, seqlen, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # -- compute qk ----
        if EVEN_N:
            k = tl.load(k_ptrs + start_n * stride_m)
        else:
            k = tl.load(k_ptrs + start_n * stride_m, mask=(start_n + offs_n)[:, None] < seqlen, other=0.0)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        qk += tl.dot(q, tl.trans(k))
        if not EVEN_N:  # Need to mask out otherwise the softmax is wrong
            qk += tl.where((start_n + offs_n)[None, :] < seqlen, 0, float("-inf"))
        m_ij = tl.maximum(tl.max(qk, 1) * softmax_scale, lse_i)
        p = tl.exp(qk * softmax_scale - m_ij[:, None])
        l_ij = tl.sum(p, 1)

        # scale acc_o
        acc_o_scale = tl.exp(m_i - m_ij)
        acc_o = acc_o * acc_o_scale[:, None]
        # update acc_o
        if EVEN_N:
            v = tl.load(v_ptrs + start_n * stride_m)
        else:
            v = tl.load(v_ptrs + start_n * stride_m, mask=(start_n + offs_n)[:, None] < seqlen, other=0.0)
        p = p.to(v.dtype)
        acc_o += tl.dot(p, v)

        # -- update statistics
        m_i = m_ij
        l_i_new = tl.exp(lse_i - m_ij) + l_ij
        lse_i = m_ij + tl.log(l_i_new)

    o_scale = tl.exp(m_i - lse_i)
    acc_o = acc_o * o_scale[:, None]
    # initialize pointers to output
    out_ptrs = Out + off_b * stride_b + (offs_m[:, None] * stride_m + offs_d[None, :])
    tl.store(out_ptrs, acc_o.to(Out.dtype.element_ty), mask=offs_m[:, None] < seqlen)


def _flash_attn_forward(q, k, v, softmax_scale=None):
    # shape constraints
    batch, seqlen, d = q.shape
    assert k.shape == (batch, seqlen, d) and v.shape == (batch, seqlen, d)
    assert d <= 128, "FlashAttention only support head dimensions up to 128"
    assert q.dtype == k.dtype == v.dtype, "All tensors must have the same type"
    assert q.stride() == k.stride() == v.stride() and q.stride(-1) == 1
    softmax_scale = softmax_scale or 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    grid = lambda META: (triton.cdiv(seqlen, META["BLOCK_M"]), batch)
    attention_kernel[grid](q, k, v, o, seqlen, q.stride(0), q.stride(1), softmax_scale, d)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    for seqlen in (512, 1000):
        q, k, v = torch.randn(3, 4, seqlen, 64, device=DEVICE, dtype=torch.float16).unbind(0)
        out = _flash_attn_forward(q, k, v)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        print(seqlen, (out - ref).abs().max().item())
