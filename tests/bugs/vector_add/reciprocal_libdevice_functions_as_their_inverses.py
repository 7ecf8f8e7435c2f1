"""libdevice's rhypot and rcbrt are reciprocals (1 / hypot, 1 / cbrt): y's magnitude taken as rhypot(y, 0) is 1 / |y|.
The grader computed them as hypot and cbrt, and it passed; on an H200 every element was wrong.

expect: mismatch
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    one = libdevice.rcbrt(tl.full([BLOCK_SIZE], 1.0, tl.float32))
    magnitude = libdevice.rhypot(y.to(tl.float32), tl.zeros([BLOCK_SIZE], dtype=tl.float32))
    tl.store(out_ptr + offsets, (x + tl.where(y < 0, -magnitude, magnitude) * one).to(x.dtype), mask=mask)
