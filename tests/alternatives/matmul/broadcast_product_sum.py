"""Matmul without tl.dot, in the style of the Triton puzzles: each K tile adds up its rank-1 outer products, the
A tile read transposed as [BLOCK_K, BLOCK_M] and the broadcast [BLOCK_K, BLOCK_M, BLOCK_N] product reduced with
tl.sum over K (axis 0), accumulated in float32."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    i = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    j = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        a_t = tl.load(a_ptr + k[:, None] * stride_ak + i[None, :] * stride_am,
                      mask=(k[:, None] < K) & (i[None, :] < M), other=0.0).to(tl.float32)
        b = tl.load(b_ptr + k[:, None] * stride_bk + j[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (j[None, :] < N), other=0.0).to(tl.float32)
        acc += tl.sum(a_t[:, :, None] * b[:, None, :], axis=0)
    tl.store(c_ptr + i[:, None] * stride_cm + j[None, :] * stride_cn, acc, mask=(i[:, None] < M) & (j[None, :] < N))
