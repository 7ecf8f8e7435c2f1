"""Keeps what the output already holds unless it is NaN: right only where the memory happens to hold NaN (the
grader's fill); on a GPU torch.empty holds whatever was there before.

expect: read_before_write
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    old = tl.load(out_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(old == old, old, x + y), mask=mask)
