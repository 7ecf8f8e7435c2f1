"""Flash attention written against module-level constants (`NEG_INF = tl.constexpr(float("-inf"))`, an alignment
`tl.constexpr(2**3)`, `ACC_DTYPE = tl.float32`, log2(e) from a `@triton.constexpr_function`), decorated with a bare
`@jit` imported from triton, with both products as `tl.dot(..., input_precision="ieee")`."""
import torch, math

import triton
import triton.language as tl
from triton import jit

NEG_INF = tl.constexpr(float("-inf"))
ALIGN = tl.constexpr(2**3)
ACC_DTYPE = tl.float32


@triton.constexpr_function
def log2_e():
    return math.log2(math.e)


@jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(axis=0)
    batch = tl.program_id(axis=1)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.max_contiguous(tl.multiple_of(tl.arange(0, HEAD_DIM), ALIGN), ALIGN)
    head = batch * stride_z

    q = tl.load(q_ptr + head + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    qk_scale = sm_scale * log2_e()

    m_i = tl.full([BLOCK_M], NEG_INF, dtype=ACC_DTYPE)
    l_i = tl.zeros([BLOCK_M], dtype=ACC_DTYPE)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=ACC_DTYPE)

    for start_n in range(0, N, BLOCK_N):
        start_n = tl.multiple_of(start_n, ALIGN)
        cols = start_n + offs_n
        k = tl.load(k_ptr + head + cols[:, None] * stride_n + offs_d[None, :], mask=cols[:, None] < N, other=0.0)
        v = tl.load(v_ptr + head + cols[:, None] * stride_n + offs_d[None, :], mask=cols[:, None] < N, other=0.0)

        qk = tl.dot(q, tl.trans(k), input_precision="ieee", out_dtype=ACC_DTYPE) * qk_scale
        qk = tl.where(cols[None, :] < N, qk, NEG_INF)

        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision="ieee")
        m_i = m_ij

    acc = acc / l_i[:, None]
    tl.store(o_ptr + head + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)


def attention(q, k, v, BLOCK_M=64, BLOCK_N=64):
    Z, N, D = q.shape
    o = torch.empty_like(q)
    attention_kernel[(triton.cdiv(N, BLOCK_M), Z)](q, k, v, o, N, q.stride(0), q.stride(1), 1 / math.sqrt(D),
                                                   HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q, k, v = (torch.randn(2, 300, 32, device=DEVICE) for _ in range(3))
    ref = torch.softmax(q @ k.mT / math.sqrt(32), -1) @ v
    torch.testing.assert_close(attention(q, k, v), ref, atol=1e-4, rtol=1e-4)
    print("ok")
