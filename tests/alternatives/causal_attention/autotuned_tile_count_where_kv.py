"""Autotuned causal flash attention (`key=["N", "HEAD_DIM"]`) that counts its key tiles, `tl.cdiv(min((start_m +
1) * BLOCK_M, N), BLOCK_N)` of them, advances K and V pointers by `BLOCK_N * stride_n`, loads them with a mask and
no `other=` then zeroes the padded rows with `tl.where`, and multiplies with `tl.dot(..., allow_tf32=False)`."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
    ],
    key=["N", "HEAD_DIM"],
)
@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_mask = offs_m[:, None] < N
    q = tl.load(q_ptr + off_z * stride_z + offs_m[:, None] * stride_n + offs_d[None, :], mask=q_mask, other=0.0)

    k_ptrs = k_ptr + off_z * stride_z + offs_n[:, None] * stride_n + offs_d[None, :]
    v_ptrs = v_ptr + off_z * stride_z + offs_n[:, None] * stride_n + offs_d[None, :]

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504

    num_tiles = tl.cdiv(tl.minimum((start_m + 1) * BLOCK_M, N), BLOCK_N)
    for j in range(num_tiles):
        cols = j * BLOCK_N + offs_n
        kv_mask = cols[:, None] < N
        k = tl.load(k_ptrs, mask=kv_mask)
        k = tl.where(kv_mask, k, 0.0)
        v = tl.load(v_ptrs, mask=kv_mask)
        v = tl.where(kv_mask, v, 0.0)

        qk = tl.dot(q, tl.trans(k), allow_tf32=False) * qk_scale
        qk = tl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], allow_tf32=False)
        m_i = m_ij

        k_ptrs += BLOCK_N * stride_n
        v_ptrs += BLOCK_N * stride_n

    out = acc / l_i[:, None]
    tl.store(o_ptr + off_z * stride_z + offs_m[:, None] * stride_n + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=q_mask)


def causal_attention(q, k, v):
    Z, N, HEAD_DIM = q.shape
    o = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_M"]), Z)
    causal_attention_kernel[grid](q, k, v, o, N, q.stride(0), q.stride(1), HEAD_DIM ** -0.5, HEAD_DIM)
    return o


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q = torch.randn(4, 1500, 64, device=DEVICE)
    k = torch.randn_like(q)
    v = torch.randn_like(q)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    print("max error", (causal_attention(q, k, v) - ref).abs().max().item())
