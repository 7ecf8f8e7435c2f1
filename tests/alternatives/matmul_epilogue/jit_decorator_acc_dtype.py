"""Fused matmul epilogue written with `from triton import jit` and `@jit`, `import torch, math` for the host
wrapper, a module-level ACC_DTYPE = tl.float32 used for the accumulator and tl.dot's out_dtype, and a tl.range
K loop."""
import torch, math

import triton
import triton.language as tl
from triton import jit

ACC_DTYPE = tl.float32


@jit
def leaky_relu(x, negative_slope: tl.constexpr):
    return tl.where(x >= 0, x, x * negative_slope)


@jit
def matmul_bias_leaky_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = offs_m < M
    n_ok = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_DTYPE)
    for k in tl.range(0, K, BLOCK_K):
        offs_k = k + tl.arange(0, BLOCK_K)
        k_ok = offs_k < K
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc += tl.dot(a, b, out_dtype=ACC_DTYPE, input_precision="ieee")
    acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(ACC_DTYPE)[None, :]
    acc = leaky_relu(acc, 0.01)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=m_ok[:, None] & n_ok[None, :])


def fused_linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """leaky_relu(x @ w + bias) for x of shape (..., K) and w of shape (K, N)."""
    lead = x.shape[:-1]
    x2 = x.reshape(math.prod(lead), x.shape[-1])
    M, K = x2.shape
    N = w.shape[1]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (math.ceil(M / 64), math.ceil(N / 64))
    matmul_bias_leaky_relu_kernel[grid](x2, w, bias, out, M, N, K, x2.stride(0), x2.stride(1), w.stride(0),
                                        w.stride(1), out.stride(0), out.stride(1), 64, 64, 32)
    return out.reshape(*lead, N)
