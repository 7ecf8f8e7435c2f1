"""Each program covers its block in two halves with a while loop, advancing the three pointer blocks (and
the offsets the mask is computed from) by `ptrs += HALF` between iterations."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    HALF: tl.constexpr = BLOCK_SIZE // 2
    start = tl.program_id(0) * BLOCK_SIZE
    offs = start + tl.arange(0, HALF)
    x_ptrs = x_ptr + offs
    y_ptrs = y_ptr + offs
    o_ptrs = out_ptr + offs
    i = 0
    while i < 2:
        mask = offs < n_elements
        a = tl.load(x_ptrs, mask=mask, other=0.0)
        b = tl.load(y_ptrs, mask=mask, other=0.0)
        tl.store(o_ptrs, a + b, mask=mask)
        x_ptrs += HALF
        y_ptrs += HALF
        o_ptrs += HALF
        offs += HALF
        i += 1
