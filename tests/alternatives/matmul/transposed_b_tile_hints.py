"""Matmul that loads B as a [BLOCK_N, BLOCK_K] tile and feeds tl.trans of it to tl.dot, with compiler hints
(tl.static_assert, tl.assume, truthful tl.multiple_of / tl.max_contiguous on the row offsets), an early-exit
guard, tl.range(..., num_stages=3) and `c_ptr.type.element_ty`."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tl.static_assert(BLOCK_K >= 16, "tl.dot needs K tiles of 16 or more")
    tl.assume(M > 0)
    tl.assume(N > 0)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if pid_m * BLOCK_M >= M:
        return
    rm = tl.max_contiguous(tl.multiple_of(pid_m * BLOCK_M + tl.arange(0, BLOCK_M), BLOCK_M), BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=3):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (k + rk[None, :] < K), other=0.0)
        # B^T tile: rows are columns of B, columns run along K
        bt = tl.load(b_ptr + (k + rk)[None, :] * stride_bk + rn[:, None] * stride_bn,
                     mask=(k + rk[None, :] < K) & (rn[:, None] < N), other=0.0)
        acc = tl.dot(a, tl.trans(bt), acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.type.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
