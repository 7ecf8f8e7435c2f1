"""Tells the compiler that the mask is constant in groups of 8 lanes (tl.max_constancy), so that it tests one lane
of 8: where the length is not a multiple of 8, the lanes past the end of the last group are stored too.

expect: kernel_error
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = tl.max_constancy(offsets < n_elements, 8)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
