"""Adds where fma(a, a, -(a * a)) is 0, as it is where an fma multiplies and then adds (rounding twice), and
subtracts where it is the product's rounding error, as a GPU's fma gives it (rounding once): right only where fma
is not one.

expect: mismatch
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    a = tl.cast(n_elements, tl.float32) * 0.1 + 0.7
    rounding_error = libdevice.fma(a, a, -(a * a))
    tl.store(out_ptr + offsets, tl.where(rounding_error == 0.0, x + y, x - y), mask=mask)
