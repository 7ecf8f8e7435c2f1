"""Flash attention in the flash-attn package's Triton style where the head dimension is a runtime argument:
`@triton.heuristics` appends BLOCK_HEADDIM (`triton.next_power_of_2(headdim)`), EVEN_N and EVEN_HEADDIM, and the
loads and the store mask the head dimension only when it is not a power of two; autotuned from a `get_configs()`
function."""
import math

import torch
import triton
import triton.language as tl


def get_configs():
    return [triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n}, num_warps=num_warps, num_stages=num_stages)
            for block_m in (64, 128) for block_n in (32, 64, 128)
            for num_warps in (4, 8) for num_stages in (2, 3)
            if block_m * block_n <= 128 * 64 or num_warps == 8]


def _block_headdim(args):
    return max(triton.next_power_of_2(args["headdim"]), 16)


@triton.autotune(configs=get_configs(), key=["seqlen_k", "headdim"])
@triton.heuristics(
    {
        "BLOCK_HEADDIM": _block_headdim,
        "EVEN_N": lambda args: args["seqlen_k"] % args["BLOCK_N"] == 0,
        "EVEN_HEADDIM": lambda args: args["headdim"] == args["BLOCK_HEADDIM"],
    }
)
@triton.jit
def attention_kernel(
    Q, K, V, Out,
    seqlen_k,
    stride_b, stride_n,
    softmax_scale,
    headdim,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_HEADDIM: tl.constexpr,
    EVEN_N: tl.constexpr,
    EVEN_HEADDIM: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_b = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_HEADDIM)
    q_ptrs = Q + off_b * stride_b + (offs_m[:, None] * stride_n + offs_d[None, :])
    k_ptrs = K + off_b * stride_b + (offs_n[:, None] * stride_n + offs_d[None, :])
    v_ptrs = V + off_b * stride_b + (offs_n[:, None] * stride_n + offs_d[None, :])

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc_o = tl.zeros([BLOCK_M, BLOCK_HEADDIM], dtype=tl.float32)

    if EVEN_HEADDIM:
        q = tl.load(q_ptrs, mask=offs_m[:, None] < seqlen_k, other=0.0)
    else:
        q = tl.load(q_ptrs, mask=(offs_m[:, None] < seqlen_k) & (offs_d[None, :] < headdim), other=0.0)

    for start_n in range(0, seqlen_k, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        if EVEN_N & EVEN_HEADDIM:
            k = tl.load(k_ptrs + start_n * stride_n)
            v = tl.load(v_ptrs + start_n * stride_n)
        elif EVEN_HEADDIM:
            k = tl.load(k_ptrs + start_n * stride_n, mask=(start_n + offs_n)[:, None] < seqlen_k, other=0.0)
            v = tl.load(v_ptrs + start_n * stride_n, mask=(start_n + offs_n)[:, None] < seqlen_k, other=0.0)
        else:
            kv_mask = ((start_n + offs_n)[:, None] < seqlen_k) & (offs_d[None, :] < headdim)
            k = tl.load(k_ptrs + start_n * stride_n, mask=kv_mask, other=0.0)
            v = tl.load(v_ptrs + start_n * stride_n, mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        if not EVEN_N:
            qk += tl.where((start_n + offs_n)[None, :] < seqlen_k, 0, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * softmax_scale)
        p = tl.exp(qk * softmax_scale - m_ij[:, None])
        acc_o_scale = tl.exp(m_i - m_ij)
        l_i = l_i * acc_o_scale + tl.sum(p, 1)
        acc_o = acc_o * acc_o_scale[:, None]
        acc_o += tl.dot(p.to(v.dtype), v)
        m_i = m_ij

    acc_o = acc_o / l_i[:, None]
    out_ptrs = Out + off_b * stride_b + (offs_m[:, None] * stride_n + offs_d[None, :])
    if EVEN_HEADDIM:
        tl.store(out_ptrs, acc_o.to(Out.dtype.element_ty), mask=offs_m[:, None] < seqlen_k)
    else:
        tl.store(out_ptrs, acc_o.to(Out.dtype.element_ty),
                 mask=(offs_m[:, None] < seqlen_k) & (offs_d[None, :] < headdim))


def flash_attn_func(q, k, v, softmax_scale=None):
    batch, seqlen, d = q.shape
    assert q.stride() == k.stride() == v.stride() and q.stride(-1) == 1
    softmax_scale = softmax_scale or 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    grid = lambda META: (triton.cdiv(seqlen, META["BLOCK_M"]), batch)
    attention_kernel[grid](q, k, v, o, seqlen, q.stride(0), q.stride(1), softmax_scale, d)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    for d in (40, 64, 80):
        q, k, v = torch.randn(3, 2, 300, d, device=DEVICE, dtype=torch.float16).unbind(0)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        print(d, (flash_attn_func(q, k, v) - ref).abs().max().item())
