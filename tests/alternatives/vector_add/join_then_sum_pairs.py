"""Each x and y joined into pairs (tl.join) and summed along the pair, accumulated into tl.zeros_like and cast with
tl.cast; a tl.debug_barrier and a tl.static_print of the block size on the way."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.debug_barrier()
    tl.static_print("BLOCK_SIZE", BLOCK_SIZE)
    pair = tl.join(x, y)  # (BLOCK_SIZE, 2)
    acc = tl.zeros_like(x)
    acc += tl.sum(pair, axis=1)
    tl.store(out_ptr + offsets, tl.cast(acc, out_ptr.dtype.element_ty), mask=mask)
