"""Softmax backward in tensor-method style: `(y * dy).sum(axis=0)` for the row's dot product and `.to()` casts,
the whole row in one block, dx = y * (dy - dot) in float32."""
import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    dot = (y * dy).sum(axis=0)
    tl.store(dx_ptr + row * stride_m + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)
