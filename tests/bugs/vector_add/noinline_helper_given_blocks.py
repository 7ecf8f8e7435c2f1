"""A helper marked noinline=True called with blocks: the interpreter runs it, the GPU compiler takes scalars only
for a function it does not inline, and refuses the call (where the kernel calls it, not in the helper).

expect: compile
"""
import triton
import triton.language as tl


@triton.jit(noinline=True)
def _add(x, y):
    return x + y


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, _add(x, y), mask=mask)
