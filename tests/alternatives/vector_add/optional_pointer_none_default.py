"""An optional pointer parameter defaulting to None (a constant to Triton), tested with `is not None`."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, scale_ptr=None):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    z = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    if scale_ptr is not None:
        z = z * tl.load(scale_ptr)
    tl.store(out_ptr + offs, z, mask=mask)
