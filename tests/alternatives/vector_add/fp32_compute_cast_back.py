"""Loads upcast to an ACC_DTYPE = tl.float32 module constant, the sum cast back with
out_ptr.dtype.element_ty, and a mask written as (offs < n) & (pid >= 0)."""
import torch
import triton
import triton.language as tl

ACC_DTYPE = tl.float32


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = (offs < n_elements) & (pid >= 0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(ACC_DTYPE)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(ACC_DTYPE)
    acc = tl.zeros([BLOCK_SIZE], dtype=ACC_DTYPE)
    acc += x
    acc += y
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)


if __name__ == "__main__":
    for dtype in (torch.float16, torch.float32):
        x = torch.randn(777, dtype=dtype)
        y = torch.randn(777, dtype=dtype)
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(777, 256),)](x, y, out, 777, BLOCK_SIZE=256)
        print(dtype, (out.float() - (x.float() + y.float())).abs().max().item())
