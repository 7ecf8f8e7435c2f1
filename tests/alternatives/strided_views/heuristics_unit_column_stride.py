"""@triton.heuristics adds CONTIGUOUS_N (stride_n == 1): the kernel then drops the column stride from the
address computation so the compiler can vectorise, and keeps the general path for strided views."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"CONTIGUOUS_N": lambda args: args["stride_n"] == 1})
@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   CONTIGUOUS_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    if CONTIGUOUS_N:
        ptrs = x_ptr + offs_m[:, None] * stride_m + offs_n[None, :]
    else:
        ptrs = x_ptr + offs_m[:, None] * stride_m + offs_n[None, :] * stride_n
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(ptrs, mask=mask)
    tl.store(ptrs, x + 1, mask=mask)


if __name__ == "__main__":
    x = torch.zeros(40, 24)
    for view in (x, x.t(), x[:, ::2]):
        add_one_kernel[(triton.cdiv(view.shape[0], 16), triton.cdiv(view.shape[1], 16))](
            view, view.shape[0], view.shape[1], view.stride(0), view.stride(1), BLOCK_M=16, BLOCK_N=16)
    print(x.unique(return_counts=True))
