"""Program 0 clears the output, every program then accumulates its block: correct only if program 0 runs first
(each program reads, with its atomic, what program 0 stored: a race in any order).

expect: race
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        for start in range(0, n_elements, BLOCK_SIZE):
            offsets = start + tl.arange(0, BLOCK_SIZE)
            tl.store(out_ptr + offsets, tl.zeros([BLOCK_SIZE], dtype=tl.float32), mask=offsets < n_elements)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.atomic_add(out_ptr + offsets, x + y, mask=mask)
