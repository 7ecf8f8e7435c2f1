"""A torch call inside the kernel: fine as Python in the interpreter, rejected by the GPU compiler.

expect: compile
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    scale = torch.ones(1).item()
    tl.store(out_ptr + offsets, (x + y) * scale, mask=mask)
