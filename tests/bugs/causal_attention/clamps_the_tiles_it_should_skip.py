"""Visits every key tile of the row, above the diagonal too, and clamps those tiles' addresses onto keys it has
already loaded: right values, nothing new loaded, and the work of a kernel that skips nothing.

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
    last = tl.minimum((block + 1) * BLOCK_M, N) - 1
    # every key tile of the sequence, every program: keys past the block's last query are clamped onto it
    for tile in range(0, N, BLOCK_N):
        keys = tile + tl.arange(0, BLOCK_N)
        safe = tl.minimum(keys, last)
        offs = base + safe[:, None] * stride_n + dims[None, :]
        k = tl.load(k_ptr + offs)
        v = tl.load(v_ptr + offs)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where((keys[None, :] <= rows[:, None]) & (keys[None, :] < N), s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    out = acc / l[:, None]
    tl.store(o_ptr + base + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N)
