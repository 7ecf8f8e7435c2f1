"""Keeps what the output held unless it is NaN, and reaches far past x where it keeps it: right over the grader's
NaN, and a second run over other garbage would fail rather than store other values.

expect: read_before_write
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    old = tl.load(out_ptr + offsets, mask=mask)
    held = old == old  # anything but NaN: what a GPU's torch.empty holds
    # where the output held something other than NaN, keep it; and step off the end of x there
    x = tl.load(x_ptr + offsets + tl.where(held, 1 << 28, 0), mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(held, old, x + y), mask=mask)
