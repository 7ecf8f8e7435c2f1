"""Matmul built from @jit helpers (`from triton import jit`): a masked tile loader and a tile store shared by A, B
and C, a module-level ACC_DTYPE = tl.float32, and `tl.dot(a, b, acc)` in a plain range loop."""
import math

import torch
import triton
import triton.language as tl
from triton import jit

ACC_DTYPE = tl.float32


@jit
def load_tile(base, rows, cols, stride_r, stride_c, n_rows, n_cols):
    ptrs = base + rows[:, None] * stride_r + cols[None, :] * stride_c
    return tl.load(ptrs, mask=(rows[:, None] < n_rows) & (cols[None, :] < n_cols), other=0.0)


@jit
def store_tile(base, value, rows, cols, stride_r, stride_c, n_rows, n_cols):
    ptrs = base + rows[:, None] * stride_r + cols[None, :] * stride_c
    tl.store(ptrs, value.to(base.dtype.element_ty), mask=(rows[:, None] < n_rows) & (cols[None, :] < n_cols))


@jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_DTYPE)
    for k in range(0, K, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        a = load_tile(a_ptr, rows, ks, stride_am, stride_ak, M, K)
        b = load_tile(b_ptr, ks, cols, stride_bk, stride_bn, K, N)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    store_tile(c_ptr, acc, rows, cols, stride_cm, stride_cn, M, N)


def matmul(a, b, block=(64, 64, 32)):
    M, K = a.shape
    N = b.shape[1]
    c = a.new_empty((M, N))
    bm, bn, bk = block
    matmul_kernel[(math.ceil(M / bm), math.ceil(N / bn))](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
                                                          BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return c


if __name__ == "__main__":
    a = torch.randn(300, 200, device="cuda")
    b = torch.randn(200, 100, device="cuda").t().contiguous().t()
    torch.testing.assert_close(matmul(a, b), a @ b, atol=1e-4, rtol=1e-4)
    print("ok")
