"""The address arithmetic lives in @triton.jit helpers (`element_ptrs(base, i, j, si, sj)`, `bounds`) that
the kernel calls, as a library of view utilities would provide them."""
import torch
import triton
import triton.language as tl


@triton.jit
def block_range(pid, BLOCK: tl.constexpr):
    return pid * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def element_ptrs(base, i, j, stride_i, stride_j):
    """Pointers to the elements (i, j) of a 2-D view with strides (stride_i, stride_j)."""
    return base + i[:, None] * stride_i + j[None, :] * stride_j


@triton.jit
def bounds(i, j, size_i, size_j):
    return (i[:, None] < size_i) & (j[None, :] < size_j)


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    i = block_range(tl.program_id(0), BLOCK_M)
    j = block_range(tl.program_id(1), BLOCK_N)
    p = element_ptrs(x_ptr, i, j, stride_m, stride_n)
    m = bounds(i, j, M, N)
    tl.store(p, tl.load(p, mask=m, other=0.0) + 1, mask=m)


def add_one_inplace(x: torch.Tensor, block=(32, 32)):
    assert x.dim() == 2
    add_one_kernel[(triton.cdiv(x.size(0), block[0]), triton.cdiv(x.size(1), block[1]))](
        x, x.size(0), x.size(1), x.stride(0), x.stride(1), *block)
