"""Fused softmax through Triton's own standard-library tl.softmax (max-subtracted exp over the block, divided by
the sum), on a float32 copy of the row padded with -inf."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_xm + offs, mask=offs < N, other=-float("inf")).to(tl.float32)
    y = tl.softmax(x, ieee_rounding=True)
    tl.store(out_ptr + row * stride_om + offs, y.to(out_ptr.dtype.element_ty), mask=offs < N)
