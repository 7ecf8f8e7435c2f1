"""Causal flash attention that hands the longest rows to the first programs (query tile `num_programs - 1 - pid`),
walks K^T (read as HEAD_DIM x BLOCK_N) and V with pointer increments in a `while` loop that stops after the
tile's last query, adds a 0/-inf causal bias to the scaled scores and uses the natural `tl.exp`."""
import torch
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(Q, K, V, O, seqlen, sz, sn, softmax_scale,
                            D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # Query tiles near the end of the sequence see the most keys: schedule them first.
    tile = tl.num_programs(0) - 1 - tl.program_id(0)
    z = tl.program_id(1)
    rows = tile * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    d = tl.arange(0, D)

    q = tl.load(Q + z * sz + rows[:, None] * sn + d[None, :], mask=rows[:, None] < seqlen, other=0.0)
    kt_ptrs = K + z * sz + cols[None, :] * sn + d[:, None]
    v_ptrs = V + z * sz + cols[:, None] * sn + d[None, :]

    m = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)

    last_key = tl.minimum(tile * BM + BM, seqlen)  # one past the last key any row of this tile sees
    n0 = 0
    while n0 < last_key:
        keys = n0 + cols
        kt = tl.load(kt_ptrs, mask=keys[None, :] < seqlen, other=0.0)
        v = tl.load(v_ptrs, mask=keys[:, None] < seqlen, other=0.0)

        s = tl.dot(q, kt) * softmax_scale
        s += tl.where(keys[None, :] <= rows[:, None], 0.0, float("-inf"))

        m_new = tl.maximum(m, tl.max(s, 1))
        scale_old = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * scale_old + tl.sum(p, 1)
        acc = acc * scale_old[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new

        kt_ptrs += BN * sn
        v_ptrs += BN * sn
        n0 += BN

    tl.store(O + z * sz + rows[:, None] * sn + d[None, :], (acc / l[:, None]).to(O.dtype.element_ty),
             mask=rows[:, None] < seqlen)


def causal_attention(q, k, v, BM=128, BN=64):
    Z, N, D = q.shape
    o = torch.empty_like(q)
    causal_attention_kernel[(triton.cdiv(N, BM), Z)](q, k, v, o, N, q.stride(0), q.stride(1), D ** -0.5, D, BM, BN,
                                                     num_warps=8, num_stages=3)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q, k, v = torch.randn(3, 4, 1024, 64, device=DEVICE, dtype=torch.float16).unbind(0)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    print((causal_attention(q, k, v) - ref).abs().max().item())
