"""Fused matmul epilogue whose loads carry no `other=`: the masked lanes of each A and B tile (and of the bias) are
zeroed with tl.where before tl.dot, and leaky ReLU is written as tl.maximum(x, 0.01 * x)."""
import triton
import triton.language as tl


@triton.jit
def matmul_bias_leaky_relu_kernel(A, B, Bias, C, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                                  TILE_M: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr):
    m = tl.program_id(0) * TILE_M + tl.arange(0, TILE_M)
    n = tl.program_id(1) * TILE_N + tl.arange(0, TILE_N)
    acc = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)
    for k0 in range(0, K, TILE_K):
        k = k0 + tl.arange(0, TILE_K)
        a_mask = (m[:, None] < M) & (k[None, :] < K)
        b_mask = (k[:, None] < K) & (n[None, :] < N)
        a = tl.load(A + m[:, None] * s_am + k[None, :] * s_ak, mask=a_mask)
        b = tl.load(B + k[:, None] * s_bk + n[None, :] * s_bn, mask=b_mask)
        a = tl.where(a_mask, a, 0.0).to(A.dtype.element_ty)
        b = tl.where(b_mask, b, 0.0).to(B.dtype.element_ty)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    bias = tl.load(Bias + n, mask=n < N)
    acc = acc + tl.where(n < N, bias.to(tl.float32), 0.0)[None, :]
    acc = tl.maximum(acc, 0.01 * acc)
    tl.store(C + m[:, None] * s_cm + n[None, :] * s_cn, acc.to(C.dtype.element_ty),
             mask=(m[:, None] < M) & (n[None, :] < N))
