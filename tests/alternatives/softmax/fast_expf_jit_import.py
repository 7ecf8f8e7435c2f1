"""Single-block softmax with `from triton import jit`, libdevice.fast_expf, a module-level ACC_DTYPE = tl.float32,
keep_dims reductions and a @triton.constexpr_function giving the output element type; multiplies by 1 / sum."""
import torch
import triton
import triton.language as tl
from triton import jit
from triton.language.extra import libdevice

ACC_DTYPE = tl.float32


@triton.constexpr_function
def out_dtype(ptr_dtype):
    return ptr_dtype.element_ty


@jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_xm + offs, mask=offs < N, other=-float("inf")).to(ACC_DTYPE)
    x_max = tl.max(x, axis=0, keep_dims=True)
    num = libdevice.fast_expf(x - x_max)
    rcp = 1.0 / tl.sum(num, axis=0, keep_dims=True)
    tl.store(out_ptr + row * stride_om + offs, (num * rcp).to(out_dtype(out_ptr.dtype)), mask=offs < N)


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), triton.next_power_of_2(x.shape[1]))
    return out
