"""Offsets from libdevice's hadd, CUDA's halving add ((a + b) >> 1): each program covers half a block, twice over,
and the other half is never written. The grader computed hadd as a plain add, and it passed; on an H200 488 of
1000 elements were wrong.

expect: unwritten_output
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = libdevice.hadd(pid * BLOCK_SIZE + tl.zeros([BLOCK_SIZE], dtype=tl.int32), tl.arange(0, BLOCK_SIZE))
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
