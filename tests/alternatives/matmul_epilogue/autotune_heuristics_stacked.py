"""Fused matmul epilogue under @triton.autotune (configs from a list comprehension, key M, N, K) stacked on
@triton.heuristics adding EVEN_K as the last parameter; unmasked K loads when even, tl.dot with allow_tf32=False."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w, num_stages=s)
             for m, n, k, w, s in [(128, 128, 64, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 64, 4, 3)]],
    key=["M", "N", "K"],
)
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_bias_leaky_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    # rows and columns past the edge are clamped onto the last row/column: loads stay in bounds, the store is masked
    rm = tl.minimum(pid_m * BLOCK_M + tl.arange(0, BLOCK_M), M - 1)
    rn = tl.minimum(pid_n * BLOCK_N + tl.arange(0, BLOCK_N), N - 1)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b, allow_tf32=False)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc += tl.load(bias_ptr + rn)[None, :]
    acc = tl.where(acc >= 0, acc, 0.01 * acc)
    om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + om[:, None] * stride_cm + on[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


def linear_leaky(x, w, b):
    M, K = x.shape
    _, N = w.shape
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))

    matmul_bias_leaky_relu_kernel[grid](x, w, b, y, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                        y.stride(0), y.stride(1))
    return y
