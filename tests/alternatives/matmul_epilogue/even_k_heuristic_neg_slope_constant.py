"""Fused matmul + bias + leaky ReLU with a @triton.heuristics EVEN_K flag (extra last parameter) that skips the K
mask when BLOCK_K divides K, NEG_SLOPE = tl.constexpr(0.01) at module level, and `acc += tl.dot(a, b)` in IEEE
float32."""
import torch
import triton
import triton.language as tl

NEG_SLOPE = tl.constexpr(0.01)


@triton.heuristics(values={"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_bias_leaky_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
            b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        else:
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    acc = tl.where(acc > 0, acc, acc * NEG_SLOPE)

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear_leaky_relu(x, weight_t, bias, block=(64, 64, 32)):
    M, K = x.shape
    N = weight_t.shape[1]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, block[0]), triton.cdiv(N, block[1]))
    matmul_bias_leaky_relu_kernel[grid](x, weight_t, bias, out, M, N, K, x.stride(0), x.stride(1),
                                        weight_t.stride(0), weight_t.stride(1), out.stride(0), out.stride(1), *block)
    return out


if __name__ == "__main__":
    lin = torch.nn.Linear(256, 384, device="cuda", dtype=torch.float16)
    x = torch.randn(100, 256, device="cuda", dtype=torch.float16)
    ref = torch.nn.functional.leaky_relu(lin(x), 0.01)
    torch.testing.assert_close(linear_leaky_relu(x, lin.weight.t(), lin.bias), ref, atol=1e-2, rtol=1e-2)
    print("ok")
