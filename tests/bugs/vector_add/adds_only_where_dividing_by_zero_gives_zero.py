"""Adds where an integer divided by zero is 0, as NumPy gives it, and subtracts where it is -1, as the GPU stage's
H200 gives it: right only where the division is not a GPU's.

expect: mismatch
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    zero = (tl.load(x_ptr) * 0.0).to(tl.int32)  # known only as the kernel runs
    quotient = 7 // zero
    tl.store(out_ptr + offsets, tl.where(quotient == 0, x + y, x - y), mask=mask)
