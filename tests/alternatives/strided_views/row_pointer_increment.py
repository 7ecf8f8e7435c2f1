"""The row pointers start at the tile's first row and advance with `ptrs += stride_m` in a tl.range loop
that stops at the last valid row, so no row mask is needed."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    start = pid_m * BLOCK_M
    end = tl.minimum(start + BLOCK_M, M)
    ptrs = x_ptr + start * stride_m + cols * stride_n
    for _ in tl.range(start, end):
        v = tl.load(ptrs, mask=mask)
        tl.store(ptrs, v + 1, mask=mask)
        ptrs += stride_m


def add_one(x: torch.Tensor, BLOCK_M: int = 16, BLOCK_N: int = 64):
    M, N = x.shape
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    add_one_kernel[grid](x, M, N, *x.stride(), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return x
