"""Causal flash attention through device-side tensor descriptors (tl.make_tensor_descriptor, as in Triton's
current fused-attention tutorial): one descriptor per tensor and batch over its [N, HEAD_DIM] matrix, so the
rows past N read as zeros and are not written; the key loop stops at the diagonal, and only the last tiles are
masked. exp2 with the scale folded in log2 units."""
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    off_z = tl.program_id(1).to(tl.int64) * stride_z
    q_desc = tl.make_tensor_descriptor(q_ptr + off_z, shape=[N, HEAD_DIM], strides=[stride_n, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr + off_z, shape=[N, HEAD_DIM], strides=[stride_n, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr + off_z, shape=[N, HEAD_DIM], strides=[stride_n, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr + off_z, shape=[N, HEAD_DIM], strides=[stride_n, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    offs_m = start_m + tl.arange(0, BLOCK_M)
    qk_scale = sm_scale * 1.44269504
    q = q_desc.load([start_m, 0])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, N)
    for start_n in range(0, hi, BLOCK_N):
        k = k_desc.load([start_n, 0])
        qk = tl.dot(q, k.T)
        if start_n + BLOCK_N > start_m:
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk = tl.where(offs_n[None, :] <= offs_m[:, None], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([start_n, 0])
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_desc.store([start_m, 0], acc.to(o_ptr.dtype.element_ty))
