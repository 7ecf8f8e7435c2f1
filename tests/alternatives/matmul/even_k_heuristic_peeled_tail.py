"""Matmul whose K loop runs over whole BLOCK_K tiles with masks on M and N only and peels the partial last K tile;
a @triton.heuristics EVEN_K flag (an extra last parameter) drops the peeled tail when BLOCK_K divides K."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask_m = rm < M
    mask_n = rn < N
    A = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    B = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_tiles = K // BLOCK_K
    for _ in range(0, k_tiles):
        a = tl.load(A, mask=mask_m[:, None], other=0.0)
        b = tl.load(B, mask=mask_n[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk
    if not EVEN_K:
        k_left = K - k_tiles * BLOCK_K
        a = tl.load(A, mask=mask_m[:, None] & (rk[None, :] < k_left), other=0.0)
        b = tl.load(B, mask=(rk[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")

    C = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(C, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def matmul(a: torch.Tensor, b: torch.Tensor, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    matmul_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), BLOCK_M, BLOCK_N, BLOCK_K)
    return c


if __name__ == "__main__":
    for shape in [(128, 96, 200), (65, 33, 256)]:
        M, N, K = shape
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        torch.testing.assert_close(matmul(a, b), a @ b, atol=2e-2, rtol=1e-2)
    print("ok")
