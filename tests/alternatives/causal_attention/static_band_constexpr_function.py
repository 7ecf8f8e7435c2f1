"""Causal flash attention with the diagonal band unrolled by `tl.static_range` over a tile count computed by a
`@triton.constexpr_function` (each band tile guarded by a runtime `if`), a shared `@jit` tile helper with a MASKED
constexpr, and module constants (`NEG_INF = tl.constexpr(float("-inf"))`, `tl.constexpr(2**4)`, `ACC_DTYPE`)."""
import torch, math

import triton
import triton.language as tl
from triton import jit

NEG_INF = tl.constexpr(float("-inf"))
MIN_DOT = tl.constexpr(2**4)
ACC_DTYPE = tl.float32
RCP_LN2 = tl.constexpr(1.0 / math.log(2.0))


@triton.constexpr_function
def band_tiles(block_m, block_n):
    """Key tiles that can overlap one query tile's diagonal: ceil(block_m / block_n), one more when misaligned."""
    return (block_m + block_n - 1) // block_n + 1


@jit
def _attend_tile(q, acc, m_i, l_i, k_ptr, v_ptr, base, start_n, offs_m, offs_d, N, stride_n, qk_scale,
                 BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    offs_n = start_n + tl.arange(0, BLOCK_N)
    kv = base + offs_n[:, None] * stride_n + offs_d[None, :]
    if MASKED:
        k = tl.load(k_ptr + kv, mask=offs_n[:, None] < N, other=0.0)
        v = tl.load(v_ptr + kv, mask=offs_n[:, None] < N, other=0.0)
    else:
        k = tl.load(k_ptr + kv)
        v = tl.load(v_ptr + kv)
    qk = tl.dot(q, tl.trans(k), out_dtype=ACC_DTYPE) * qk_scale
    if MASKED:
        qk = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < N), qk, NEG_INF)
    m_ij = tl.maximum(m_i, tl.max(qk, 1))
    alpha = tl.exp2(m_i - m_ij)
    p = tl.exp2(qk - m_ij[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, m_ij, l_i


@jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(BLOCK_M >= MIN_DOT)
    tl.static_assert(BLOCK_N >= MIN_DOT)
    start_m = tl.program_id(0)
    base = tl.program_id(1) * stride_z
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    qk_scale = sm_scale * RCP_LN2

    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=ACC_DTYPE)
    m_i = tl.full([BLOCK_M], NEG_INF, dtype=ACC_DTYPE)
    l_i = tl.zeros([BLOCK_M], dtype=ACC_DTYPE)

    band_lo = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
    band_hi = tl.minimum((start_m + 1) * BLOCK_M, N)
    for start_n in range(0, band_lo, BLOCK_N):
        acc, m_i, l_i = _attend_tile(q, acc, m_i, l_i, k_ptr, v_ptr, base, start_n, offs_m, offs_d, N, stride_n,
                                     qk_scale, BLOCK_N, False)
    for t in tl.static_range(band_tiles(BLOCK_M, BLOCK_N)):
        start_n = band_lo + t * BLOCK_N
        if start_n < band_hi:
            acc, m_i, l_i = _attend_tile(q, acc, m_i, l_i, k_ptr, v_ptr, base, start_n, offs_m, offs_d, N,
                                         stride_n, qk_scale, BLOCK_N, True)

    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :],
             (acc / l_i[:, None]).to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < N)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    for BLOCK_M, BLOCK_N in ((64, 32), (32, 64), (64, 64)):
        q, k, v = (torch.randn(2, 333, 32, device=DEVICE) for _ in range(3))
        o = torch.empty_like(q)
        causal_attention_kernel[(triton.cdiv(333, BLOCK_M), 2)](q, k, v, o, 333, q.stride(0), q.stride(1),
                                                                32 ** -0.5, 32, BLOCK_M, BLOCK_N)
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        print(BLOCK_M, BLOCK_N, (o - ref).abs().max().item())
