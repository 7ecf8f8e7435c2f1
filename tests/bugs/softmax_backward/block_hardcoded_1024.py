"""The row in a block of 1024 lanes, whatever BLOCK_N says.

expect: unwritten_output
"""

import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, 1024)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    # d softmax_i / d x_j = y_i (delta_ij - y_j), so dx = y * (dy - <dy, y>).
    dot = tl.sum(dy * y, axis=0)
    tl.store(dx_ptr + row * stride_m + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)
