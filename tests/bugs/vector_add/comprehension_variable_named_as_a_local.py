"""Scales its inputs with a comprehension whose loop variable has the name of the kernel's x: Python keeps the
comprehension's variable to itself, Triton binds it in the kernel, where x is then the last element (0.0) and the
kernel on the GPU stores y alone.

expect: compile
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    scales = [x * 1.0 for x in (1.0, 0.0)]
    tl.store(out_ptr + offsets, x * scales[0] + y, mask=mask)
