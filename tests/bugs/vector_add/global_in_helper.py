"""A @jit helper reads a plain module-level float: Triton refuses globals that are not tl.constexpr, and the
refusal comes from inside the helper, wrapped in one at the kernel's line that calls it.

expect: compile
"""
import triton
import triton.language as tl

SCALE = 1.0


@triton.jit
def scaled(v):
    return v * SCALE


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, scaled(x + y), mask=mask)
