"""Fused matmul epilogue without tl.dot (Triton puzzles style): each K tile is upcast to float32 and added up as
rank-1 outer products, a broadcast [BK, B0, B1] product of the transposed A tile and the B tile summed over K
(axis 0), then bias and leaky ReLU on the float32 tile."""
import triton
import triton.language as tl


@triton.jit
def matmul_bias_leaky_relu_kernel(x_ptr, w_ptr, bias_ptr, z_ptr, M, N, K, sxm, sxk, swk, swn, szm, szn,
                                  B0: tl.constexpr, B1: tl.constexpr, BK: tl.constexpr):
    i = tl.program_id(0) * B0 + tl.arange(0, B0)
    j = tl.program_id(1) * B1 + tl.arange(0, B1)
    z = tl.zeros((B0, B1), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + tl.arange(0, BK)
        xt = tl.load(x_ptr + k[:, None] * sxk + i[None, :] * sxm, mask=(k[:, None] < K) & (i[None, :] < M), other=0.0)
        w = tl.load(w_ptr + k[:, None] * swk + j[None, :] * swn, mask=(k[:, None] < K) & (j[None, :] < N), other=0.0)
        z += tl.sum(xt.to(tl.float32)[:, :, None] * w.to(tl.float32)[:, None, :], axis=0)
    z += tl.load(bias_ptr + j, mask=j < N, other=0.0).to(tl.float32)[None, :]
    z = tl.where(z >= 0, z, 0.01 * z)
    tl.store(z_ptr + i[:, None] * szm + j[None, :] * szn, z, mask=(i[:, None] < M) & (j[None, :] < N))
