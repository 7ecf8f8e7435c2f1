"""Causal flash attention whose kernel (`@triton.jit(do_not_specialize=["seq_len"])`, a docstring, `tl.assume` on
the strides) calls a `@triton.jit` tile helper defined below it, with keyword arguments, once for the key tiles
wholly before the query tile and once, with a DIAGONAL constexpr, for the tiles that cross the diagonal."""
import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))


@triton.jit(do_not_specialize=["seq_len"])
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """One program per (query tile, batch entry); the keys after the tile's last query are never read."""
    tl.assume(stride_z >= 0)
    tl.assume(stride_n > 0)
    start_m = tl.program_id(0)
    base = tl.program_id(1) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < seq_len,
                other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    diag_start = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
    acc, m_i, l_i = _attend(q=q, acc=acc, m_i=m_i, l_i=l_i, k_ptr=k_ptr + base, v_ptr=v_ptr + base,
                            offs_m=offs_m, lo=0, hi=diag_start, seq_len=seq_len, stride_n=stride_n,
                            qk_scale=sm_scale * LOG2E, HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N, DIAGONAL=False)
    acc, m_i, l_i = _attend(q=q, acc=acc, m_i=m_i, l_i=l_i, k_ptr=k_ptr + base, v_ptr=v_ptr + base,
                            offs_m=offs_m, lo=diag_start, hi=tl.minimum((start_m + 1) * BLOCK_M, seq_len),
                            seq_len=seq_len, stride_n=stride_n, qk_scale=sm_scale * LOG2E,
                            HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N, DIAGONAL=True)

    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :],
             (acc / l_i[:, None]).to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < seq_len)


@triton.jit
def _attend(q, acc, m_i, l_i, k_ptr, v_ptr, offs_m, lo, hi, seq_len, stride_n, qk_scale,
            HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, DIAGONAL: tl.constexpr):
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        if DIAGONAL:
            k = tl.load(k_ptr + offs_n[:, None] * stride_n + offs_d[None, :], mask=offs_n[:, None] < seq_len,
                        other=0.0)
            v = tl.load(v_ptr + offs_n[:, None] * stride_n + offs_d[None, :], mask=offs_n[:, None] < seq_len,
                        other=0.0)
        else:
            k = tl.load(k_ptr + offs_n[:, None] * stride_n + offs_d[None, :])
            v = tl.load(v_ptr + offs_n[:, None] * stride_n + offs_d[None, :])
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        if DIAGONAL:
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    return acc, m_i, l_i


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    Z, N, D = 2, 700, 64
    q, k, v = (torch.randn(Z, N, D, device=DEVICE, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    causal_attention_kernel[(triton.cdiv(N, 128), Z)](q, k, v, o, N, q.stride(0), q.stride(1), D ** -0.5, D, 128, 64)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    print((o - ref).abs().max().item())
