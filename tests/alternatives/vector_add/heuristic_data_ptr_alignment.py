"""A heuristic tests the input's 16-byte alignment with data_ptr() and adds tl.multiple_of hints where it holds."""
import triton
import triton.language as tl


@triton.heuristics({"ALIGNED": lambda args: args["x_ptr"].data_ptr() % 16 == 0})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, ALIGNED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if ALIGNED:
        offsets = tl.multiple_of(offsets, 16)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
