"""triton.jit called on the function with an option: triton.jit(_add, do_not_specialize=[...])."""
import triton
import triton.language as tl


def _add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


add_kernel = triton.jit(_add, do_not_specialize=["n_elements"])
