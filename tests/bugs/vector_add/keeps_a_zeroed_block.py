"""Stores x alone where every element of its output block already holds 0 (a fresh allocation): right over
the grader's NaN and over garbage drawn element by element, wrong over zeroed memory.

expect: read_before_write
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    old = tl.load(out_ptr + offs, mask=mask, other=1.0)
    zeros = tl.sum((old == 0.0).to(tl.int32), axis=0)
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    keep_y = zeros < BLOCK_SIZE
    tl.store(out_ptr + offs, x + y * keep_y.to(tl.float32), mask=mask)
