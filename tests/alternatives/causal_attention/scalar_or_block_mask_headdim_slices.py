"""Causal flash attention in a single loop whose score mask ORs a scalar test (the whole key tile lies before the
first query of the tile) with the per-element test `offs_n <= offs_m`; Q K^T accumulated over 16-wide head-dim
slices with `tl.static_range`, the loop bound `min((start_m + 1) * BLOCK_M, N)` from `tl.minimum`."""
import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
SLICE = tl.constexpr(16)


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    first_row = start_m * BLOCK_M
    offs_m = first_row + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_s = tl.arange(0, SLICE)
    q_base = q_ptr + off_z * stride_z + offs_m[:, None] * stride_n
    k_base = k_ptr + off_z * stride_z
    v_base = v_ptr + off_z * stride_z
    row_ok = offs_m[:, None] < N

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * LOG2E

    for start_n in range(0, tl.minimum(first_row + BLOCK_M, N), BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        key_ok = offs_n < N
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for d0 in tl.static_range(0, HEAD_DIM, SLICE):
            q_s = tl.load(q_base + (d0 + offs_s)[None, :], mask=row_ok, other=0.0)
            kt_s = tl.load(k_base + offs_n[None, :] * stride_n + (d0 + offs_s)[:, None], mask=key_ok[None, :],
                           other=0.0)
            qk += tl.dot(q_s, kt_s)
        # Below the diagonal tile the scalar test is enough; on it, the per-element one decides (and also hides
        # the keys past N from every real row).
        below = start_n + BLOCK_N <= first_row
        qk = tl.where(below | (offs_n[None, :] <= offs_m[:, None]), qk * qk_scale, float("-inf"))

        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + offs_n[:, None] * stride_n + offs_d[None, :], mask=key_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij

    tl.store(o_ptr + off_z * stride_z + offs_m[:, None] * stride_n + offs_d[None, :],
             (acc / l_i[:, None]).to(o_ptr.dtype.element_ty), mask=row_ok)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    Z, N, D = 3, 250, 64
    q, k, v = (torch.randn(Z, N, D, device=DEVICE, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    causal_attention_kernel[(triton.cdiv(N, 64), Z)](q, k, v, o, N, q.stride(0), q.stride(1), 1 / math.sqrt(D),
                                                     D, 64, 32)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    print((o - ref).abs().max().item())
