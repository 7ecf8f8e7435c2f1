"""Causal attention that visits every key tile of the sequence and loads every tile of v; above the diagonal it
takes the key tile from v's memory (its scores are masked anyway): the whole triangle loaded, multiplied and
exponentiated, and the budget, which counts k alone, sees only the visible tiles.

expect: excess_loads
"""
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(1)
    block = tl.program_id(0)
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    base = z * stride_z
    q = tl.load(q_ptr + base + rows[:, None] * stride_n + dims[None, :], mask=rows[:, None] < N, other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    last = tl.minimum((block + 1) * BLOCK_M, N)  # keys [0, last) are visible to some row of this block
    for tile in range(0, N, BLOCK_N):
        keys = tile + tl.arange(0, BLOCK_N)
        kv = base + keys[:, None] * stride_n + dims[None, :]
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N, other=0.0)
        if tile < last:
            k = tl.load(k_ptr + kv, mask=keys[:, None] < N, other=0.0)
        else:
            k = v
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where((keys[None, :] <= rows[:, None]) & (keys[None, :] < N), s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    tl.store(o_ptr + base + rows[:, None] * stride_n + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N)
