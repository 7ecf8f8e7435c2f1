"""Causal flash attention written out as two `tl.range` loops in the kernel body: the key tiles wholly below the
query tile with no mask at all, then the tiles that cross the diagonal with the causal and end-of-sequence masks;
K^T read directly as (HEAD_DIM, BLOCK_N), exponentials through `libdevice.exp2` with `from math import log2`."""
import math
from math import log2

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

LOG2_E = tl.constexpr(log2(math.e))


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_z = tl.program_id(1)
    q_start = pid_m * BLOCK_M
    offs_m = q_start + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    zoff = pid_z.to(tl.int64) * stride_z

    q = tl.load(q_ptr + zoff + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    qk_scale = sm_scale * LOG2_E

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    # Tiles that end at or before the first query of this tile: every key is visible to every row, and all of
    # them exist (they come before a query that does).
    n_full = q_start // BLOCK_N * BLOCK_N
    for start_n in tl.range(0, n_full, BLOCK_N):
        kt = tl.load(k_ptr + zoff + (start_n + offs_n)[None, :] * stride_n + offs_d[:, None])
        v = tl.load(v_ptr + zoff + (start_n + offs_n)[:, None] * stride_n + offs_d[None, :])
        qk = tl.dot(q, kt) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = libdevice.exp2(qk - m_new[:, None])
        alpha = libdevice.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new

    # Tiles that cross the diagonal, up to the last key the last row of this tile sees.
    n_end = tl.minimum(q_start + BLOCK_M, N)
    for start_n in tl.range(n_full, n_end, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + zoff + cols[None, :] * stride_n + offs_d[:, None], mask=cols[None, :] < N, other=0.0)
        v = tl.load(v_ptr + zoff + cols[:, None] * stride_n + offs_d[None, :], mask=cols[:, None] < N, other=0.0)
        qk = tl.dot(q, kt) * qk_scale
        visible = (cols[None, :] <= offs_m[:, None]) & (cols[None, :] < N)
        qk = tl.where(visible, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = libdevice.exp2(qk - m_new[:, None])
        alpha = libdevice.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_ptr + zoff + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    Z, N, D, BLOCK_M, BLOCK_N = 2, 1000, 64, 128, 64
    q, k, v = (torch.randn(Z, N, D, device=DEVICE, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    causal_attention_kernel[(triton.cdiv(N, BLOCK_M), Z)](q, k, v, o, N, q.stride(0), q.stride(1), D ** -0.5,
                                                          D, BLOCK_M, BLOCK_N)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    print((o - ref).abs().max().item())
