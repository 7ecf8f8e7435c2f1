"""Keeps what the output held where it is huge, and stores x + y elsewhere: right over NaN, zeros and small
garbage, wrong over the large values a GPU's torch.empty may hold.

expect: read_before_write
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    old = tl.load(out_ptr + offs, mask=mask)
    held = tl.abs(old) > 100000.0  # garbage beyond what the grader's second run draws: kept
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(held, old, x + y), mask=mask)
