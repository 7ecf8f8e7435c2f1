"""Flash attention that walks the key tiles from the last (ragged) one back to the first, `tl.range` over a tile
count with the tile index reversed, so the running max starts on the tile holding the padded keys; scale applied
to the scores, `tl.math.exp2` with `LOG2E = tl.constexpr(math.log2(math.e))`, padded keys masked with `tl.where`."""
import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_z = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptr += pid_z * stride_z
    k_ptr += pid_z * stride_z
    v_ptr += pid_z * stride_z
    o_ptr += pid_z * stride_z

    q = tl.load(q_ptr + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < n, other=0.0)
    scale = sm_scale * LOG2E

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    n_tiles = tl.cdiv(n, BLOCK_N)
    for t in tl.range(0, n_tiles):
        start_n = (n_tiles - 1 - t) * BLOCK_N
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + offs_n[:, None] * stride_n + offs_d[None, :], mask=offs_n[:, None] < n, other=0.0)
        v = tl.load(v_ptr + offs_n[:, None] * stride_n + offs_d[None, :], mask=offs_n[:, None] < n, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(offs_n[None, :] < n, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    tl.store(o_ptr + offs_m[:, None] * stride_n + offs_d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < n)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q, k, v = (torch.randn(2, 99, 32, device=DEVICE) for _ in range(3))
    o = torch.empty_like(q)
    attention_kernel[(triton.cdiv(99, 32), 2)](q, k, v, o, 99, q.stride(0), q.stride(1), 32 ** -0.5, 32, 32, 32)
    print((o - torch.nn.functional.scaled_dot_product_attention(q, k, v)).abs().max().item())
