"""x and y interleaved (tl.interleave), reshaped into pairs, each pair flipped (tl.flip) and split back
(tl.split): y + x."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    both = tl.interleave(x, y)                       # x0 y0 x1 y1 ...
    b, a = tl.split(tl.flip(tl.reshape(both, (BLOCK_SIZE, 2)), 1))  # y0 x0 y1 x1 ...
    tl.store(out_ptr + offsets, a + b, mask=mask)
