"""B read as a [BLOCK_N, BLOCK_K] tile (the layout of an nn.Linear weight, rows of B^T) and fed to tl.dot
through tl.trans, as xformers/FlagGems kernels do for W^T; K loop with a scalar tail flag, float32 accumulation,
int64 tile offsets."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    bt_ptrs = b_ptr + rn[:, None] * stride_bn + rk[None, :] * stride_bk     # [BLOCK_N, BLOCK_K] = B^T tile
    m_ok = rm[:, None] < M
    n_ok = rn[:, None] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + rk)[None, :] < K
        a = tl.load(a_ptrs, mask=m_ok & k_ok, other=0.0)
        bt = tl.load(bt_ptrs, mask=n_ok & k_ok, other=0.0)
        acc = tl.dot(a, tl.trans(bt), acc)
        a_ptrs += BLOCK_K * stride_ak
        bt_ptrs += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=m_ok & (rn[None, :] < N))
