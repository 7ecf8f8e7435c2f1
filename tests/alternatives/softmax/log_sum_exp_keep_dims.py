"""In log space: the maximum and the log of the sum with keep_dims=True (tl.log2 of a sum of tl.exp2), then
exp(x - max - log_sum)."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0, keep_dims=True)
    log_z = tl.log2(tl.sum(tl.exp2((x - m) * 1.4426950408889634), axis=0, keep_dims=True)) / 1.4426950408889634
    y = tl.exp(x - m - log_z)
    tl.store(out_ptr + row * stride_om + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
