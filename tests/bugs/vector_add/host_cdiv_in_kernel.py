"""triton.cdiv called in the kernel: a host function, whose `+` on a kernel value the GPU compiler refuses
(Triton says "Did you forget to add @triton.jit ?"; the grader adds that tl.cdiv is the kernel's).

expect: compile
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    last = triton.cdiv(n_elements, BLOCK_SIZE) - 1
    offsets = tl.minimum(pid, last) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
