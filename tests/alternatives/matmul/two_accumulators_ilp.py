"""Matmul with two independent accumulators (even and odd K blocks), summed at the end; a jit helper loads a
K block of both operands with masks computed from a constexpr flag, tl.assume on the sizes."""
import triton
import triton.language as tl


@triton.jit
def _kblock(a_ptr, b_ptr, rm, rn, kb, M, N, K, sam, sak, sbk, sbn, BLOCK_K: tl.constexpr):
    kk = kb * BLOCK_K + tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
    return a, b


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tl.assume(M > 0)
    tl.assume(N > 0)
    tl.assume(K > 0)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc0 = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    acc1 = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    nk = tl.cdiv(K, BLOCK_K)
    for kb in range(0, nk // 2):
        a, b = _kblock(a_ptr, b_ptr, rm, rn, 2 * kb, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_K)
        acc0 = tl.dot(a, b, acc0)
        a, b = _kblock(a_ptr, b_ptr, rm, rn, 2 * kb + 1, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_K)
        acc1 = tl.dot(a, b, acc1)
    if nk % 2 == 1:
        a, b = _kblock(a_ptr, b_ptr, rm, rn, nk - 1, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BLOCK_K)
        acc0 = tl.dot(a, b, acc0)
    acc = acc0 + acc1
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
