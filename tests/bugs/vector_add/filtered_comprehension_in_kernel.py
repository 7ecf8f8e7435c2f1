"""Sums the inputs with a comprehension whose `if` keeps only some of them: Triton 3.9 applies the filter, Triton 3.6
drops it and adds every pointer's block, so the kernel computes two different things on the GPU stage's machines.

expect: compile
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x, y = [tl.load(p + offsets, mask=mask) for p in (x_ptr, y_ptr, out_ptr) if p is not out_ptr]
    tl.store(out_ptr + offsets, x + y, mask=mask)
