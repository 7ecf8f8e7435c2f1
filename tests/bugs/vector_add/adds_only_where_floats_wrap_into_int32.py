"""Adds where a float far past int32's range converts to a negative integer, as NumPy wraps it, and subtracts
where it saturates to INT_MAX, as a GPU converts it: right only where the conversion is not a GPU's.

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
    huge = (tl.cast(n_elements, tl.float32) * 1.0e20).to(tl.int32)
    tl.store(out_ptr + offsets, tl.where(huge < 0, x + y, x - y), mask=mask)
