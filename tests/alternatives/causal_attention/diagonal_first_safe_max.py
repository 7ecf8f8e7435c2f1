"""Causal flash attention that starts on the diagonal tile and walks the key tiles back towards key 0 (`while`
loop, pointers moved back by `BLOCK_N * stride_n`), so a row can see no key at all in its first tiles: the running
max is made -inf-safe (`tl.where(m_new == -inf, 0, m_new)`) before it is subtracted, as in kernels that allow
fully masked rows."""
import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = off_z * stride_z

    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    qk_scale = sm_scale * LOG2E

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    # The last key tile that holds a key some row of this query tile may see.
    last = tl.minimum((start_m + 1) * BLOCK_M, N) - 1
    start_n = last // BLOCK_N * BLOCK_N
    k_ptrs = k_ptr + base + (start_n + offs_n)[:, None] * stride_n + offs_d[None, :]
    v_ptrs = v_ptr + base + (start_n + offs_n)[:, None] * stride_n + offs_d[None, :]
    while start_n >= 0:
        cols = start_n + offs_n
        k = tl.load(k_ptrs, mask=cols[:, None] < N, other=0.0)
        v = tl.load(v_ptrs, mask=cols[:, None] < N, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        qk = tl.where((cols[None, :] <= offs_m[:, None]) & (cols[None, :] < N), qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, 1))
        # A row that has seen no key yet keeps m = -inf: subtract 0 instead, so -inf - -inf never happens.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(qk - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

        start_n -= BLOCK_N
        k_ptrs -= BLOCK_N * stride_n
        v_ptrs -= BLOCK_N * stride_n

    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    Z, N, D = 2, 300, 64
    q, k, v = (torch.randn(Z, N, D, device=DEVICE, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    causal_attention_kernel[(triton.cdiv(N, 64), Z)](q, k, v, o, N, q.stride(0), q.stride(1), 1 / math.sqrt(D),
                                                     D, 64, 16)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    print((o - ref).abs().max().item())
