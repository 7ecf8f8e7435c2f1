"""dx = y * (dot - dy): the sign of the gradient is flipped.

expect: mismatch
"""
import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    # d softmax_i / d x_j = y_i (delta_ij - y_j), so dx = y * (dy - <dy, y>).
    dot = tl.sum(dy * y, axis=0)
    tl.store(dx_ptr + row * stride_m + cols, (y * (dot - dy)).to(dx_ptr.dtype.element_ty), mask=mask)
