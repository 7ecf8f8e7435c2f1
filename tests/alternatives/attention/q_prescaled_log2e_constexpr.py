"""Flash attention with the softmax scale and log2(e) folded into Q once, before the key loop (`LOG2E =
tl.constexpr(math.log2(math.e))`), exp2 on the raw scores, a `tl.range` loop over the key tiles and `k.T`."""
import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))


@triton.jit
def attention_kernel(Q, K, V, O, seq_len, stride_qz, stride_qn, scale,
                     D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_z = tl.program_id(1)
    Q += pid_z * stride_qz
    K += pid_z * stride_qz
    V += pid_z * stride_qz
    O += pid_z * stride_qz

    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    row_mask = offs_m < seq_len

    # Scores in log2 units straight out of the dot product: scale Q once instead of every score.
    q = tl.load(Q + offs_m[:, None] * stride_qn + offs_d[None, :], mask=row_mask[:, None], other=0.0)
    q = (q * (scale * LOG2E)).to(Q.dtype.element_ty)

    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)

    for start_n in tl.range(0, seq_len, BN):
        offs_n = start_n + tl.arange(0, BN)
        col_mask = offs_n < seq_len
        kv_offs = offs_n[:, None] * stride_qn + offs_d[None, :]
        k = tl.load(K + kv_offs, mask=col_mask[:, None], other=0.0)
        s = tl.dot(q, k.T)
        s = tl.where(col_mask[None, :], s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, axis=1)

        v = tl.load(V + kv_offs, mask=col_mask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * stride_qn + offs_d[None, :], acc.to(O.dtype.element_ty), mask=row_mask[:, None])


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_m: int = 64, block_n: int = 64):
    """q, k, v: (batch, seq, head_dim), all with the same strides and a contiguous last dimension."""
    batch, seq_len, head_dim = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, block_m), batch)
    attention_kernel[grid](q, k, v, o, seq_len, q.stride(0), q.stride(1), 1.0 / math.sqrt(head_dim),
                           head_dim, block_m, block_n)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    torch.manual_seed(0)
    for dtype in (torch.float16, torch.float32):
        q, k, v = (torch.randn(3, 333, 64, device=DEVICE, dtype=dtype) for _ in range(3))
        expected = torch.softmax((q.float() @ k.float().transpose(1, 2)) / 8.0, dim=-1) @ v.float()
        torch.testing.assert_close(flash_attention(q, k, v).float(), expected, atol=1e-2, rtol=1e-2)
    print("ok")
