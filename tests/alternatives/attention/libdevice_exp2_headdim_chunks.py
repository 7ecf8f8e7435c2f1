"""Flash attention whose Q K^T is accumulated over 16-wide slices of the head dimension with `tl.static_range`,
exponentials through `libdevice.exp2` with `from math import log2`, and key masks that combine a scalar test (the
tile is whole) with the per-lane test in the K, V and score masks."""
import math
from math import log2

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

RCP_LN2 = tl.constexpr(log2(math.e))
D_SLICE = tl.constexpr(16)


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_b, stride_t, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(HEAD_DIM // D_SLICE * D_SLICE == HEAD_DIM)
    start_m = tl.program_id(0)
    off_b = tl.program_id(1)
    q_ptr += off_b * stride_b
    k_ptr += off_b * stride_b
    v_ptr += off_b * stride_b
    o_ptr += off_b * stride_b

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_s = tl.arange(0, D_SLICE)
    offs_d = tl.arange(0, HEAD_DIM)
    qk_scale = sm_scale * RCP_LN2

    m_i = tl.full([BLOCK_M], value=float("-inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], value=0.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    for start_n in range(0, N, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        # A whole tile needs no per-lane test; the scalar folds into the lane mask.
        key_ok = (start_n + BLOCK_N <= N) | (offs_n < N)

        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for d0 in tl.static_range(0, HEAD_DIM, D_SLICE):
            q_s = tl.load(q_ptr + offs_m[:, None] * stride_t + (d0 + offs_s)[None, :],
                          mask=offs_m[:, None] < N, other=0.0)
            kt_s = tl.load(k_ptr + offs_n[None, :] * stride_t + (d0 + offs_s)[:, None],
                           mask=key_ok[None, :], other=0.0)
            qk = tl.dot(q_s, kt_s, qk)
        qk = tl.where(key_ok[None, :], qk * qk_scale, float("-inf"))

        m_ij = tl.maximum(m_i, tl.max(qk, axis=1))
        p = libdevice.exp2(qk - m_ij[:, None])
        alpha = libdevice.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, axis=1)

        v = tl.load(v_ptr + offs_n[:, None] * stride_t + offs_d[None, :], mask=key_ok[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_ij

    o = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * stride_t + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    B, N, D = 2, 190, 64
    q = torch.randn(B, N, D, device=DEVICE)
    k = torch.randn(B, N, D, device=DEVICE)
    v = torch.randn(B, N, D, device=DEVICE)
    o = torch.empty_like(q)
    attention_kernel[(triton.cdiv(N, 32), B)](q, k, v, o, N, q.stride(0), q.stride(1), D ** -0.5, D, 32, 32)
    ref = torch.softmax(q @ k.transpose(-1, -2) * D ** -0.5, dim=-1) @ v
    print("max abs error", (o - ref).abs().max().item())
