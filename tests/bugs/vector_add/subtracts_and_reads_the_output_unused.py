"""Subtracts instead of adding. It also loads its output block first, a read it never uses: the mismatch is the
diagnosis, not the read.

expect: mismatch
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    o = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = o < n_elements
    unused = tl.load(out_ptr + o, mask=m)
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=m) - tl.load(y_ptr + o, mask=m), mask=m)
