"""Flash attention with the online-softmax step factored into a `@triton.jit` helper that returns the new (m, l,
acc), the program id linearised and split back into (query tile, batch), Q pre-multiplied by sm_scale in float32
with natural `tl.math.exp`, a `tl.range(..., num_stages=2)` loop over the tile count from `tl.cdiv`, and `k.T`."""
import torch
import triton
import triton.language as tl


@triton.jit
def _online_softmax_step(m_i, l_i, acc, s, v):
    """Fold one tile of scores s (BLOCK_M, BLOCK_N) and values v (BLOCK_N, D) into the running state."""
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    corr = tl.math.exp(m_i - m_new)
    p = tl.math.exp(s - m_new[:, None])
    l_new = l_i * corr + tl.sum(p, axis=1)
    acc = acc * corr[:, None] + tl.dot(p.to(v.dtype), v)
    return m_new, l_new, acc


@triton.jit
def attention_kernel(Qp, Kp, Vp, Op, L, s_batch, s_tok, inv_sqrt_d,
                     Dh: tl.constexpr, Mt: tl.constexpr, Nt: tl.constexpr):
    pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
    n_m_tiles = tl.num_programs(0)
    m_tile = pid % n_m_tiles
    b = pid // n_m_tiles

    r = m_tile * Mt + tl.arange(0, Mt)
    d = tl.arange(0, Dh)
    c = tl.arange(0, Nt)
    base = b * s_batch

    q = tl.load(Qp + base + r[:, None] * s_tok + d[None, :], mask=r[:, None] < L, other=0.0)
    q = q.to(tl.float32) * inv_sqrt_d

    m_i = tl.full([Mt], float("-inf"), tl.float32)
    l_i = tl.zeros([Mt], tl.float32)
    acc = tl.zeros([Mt, Dh], tl.float32)

    for j in tl.range(0, tl.cdiv(L, Nt), num_stages=2):
        kc = j * Nt + c
        kv_mask = kc[:, None] < L
        k = tl.load(Kp + base + kc[:, None] * s_tok + d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(Vp + base + kc[:, None] * s_tok + d[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q.to(k.dtype), k.T)
        s = tl.where(kc[None, :] < L, s, float("-inf"))
        m_i, l_i, acc = _online_softmax_step(m_i, l_i, acc, s, v)

    tl.store(Op + base + r[:, None] * s_tok + d[None, :], (acc / l_i[:, None]).to(Op.dtype.element_ty),
             mask=r[:, None] < L)


def attention(q, k, v):
    B, L, D = q.shape
    o = torch.empty_like(q)
    attention_kernel[(triton.cdiv(L, 32), B)](q, k, v, o, L, q.stride(0), q.stride(1), D ** -0.5, D, 32, 32,
                                              num_warps=4)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q, k, v = (torch.randn(4, 129, 16, device=DEVICE) for _ in range(3))
    print((attention(q, k, v) - torch.nn.functional.scaled_dot_product_attention(q, k, v)).abs().max())
