"""Causal flash attention in one loop over the key tiles up to `min((start_m + 1) * BLOCK_M, N)` (the builtin
`min`), every tile masked with `tl.where(offs_m[:, None] >= offs_n[None, :], qk, -inf)`; the scale and
`tl.constexpr(math.log2(math.e))` are folded into Q once, and K is transposed with `k.T`."""
import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, stride_batch, stride_seq, scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_b = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = off_b * stride_batch

    q = tl.load(q_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], mask=offs_m[:, None] < seq_len,
                other=0.0)
    q = (q * (scale * LOG2E)).to(q_ptr.dtype.element_ty)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    # Keys after this tile's last query are masked for every row: never load them.
    end_n = min((start_m + 1) * BLOCK_M, seq_len)
    for start_n in range(0, end_n, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_ptrs = base + offs_n[:, None] * stride_seq + offs_d[None, :]
        k = tl.load(k_ptr + kv_ptrs, mask=offs_n[:, None] < seq_len, other=0.0)
        v = tl.load(v_ptr + kv_ptrs, mask=offs_n[:, None] < seq_len, other=0.0)

        qk = tl.dot(q, k.T)
        # j <= i also rules out the keys past the end for every real row (they come after it).
        qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_seq + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


def causal_attention(q, k, v, block_m=64, block_n=64):
    batch, seq_len, head_dim = q.shape
    o = torch.empty_like(q)
    causal_attention_kernel[(triton.cdiv(seq_len, block_m), batch)](
        q, k, v, o, seq_len, q.stride(0), q.stride(1), 1.0 / math.sqrt(head_dim), head_dim, block_m, block_n)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q, k, v = (torch.randn(2, 500, 64, device=DEVICE, dtype=torch.float16) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(causal_attention(q, k, v), ref, atol=5e-3, rtol=5e-3)
    print("ok")
