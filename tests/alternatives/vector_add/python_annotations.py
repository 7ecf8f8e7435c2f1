"""Python annotations Triton ignores or reads: torch.Tensor on the pointers."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr: torch.Tensor, y_ptr: torch.Tensor, out_ptr: torch.Tensor, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
