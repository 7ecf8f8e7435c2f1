"""Softmax backward with `while` loops that advance the y, dy and dx pointer blocks by BLOCK_N and count the columns
left, a float32 lane accumulator for sum(y * dy), then dx = y * (dy - sum)."""
import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    lanes = tl.arange(0, BLOCK_N)
    row_off = tl.program_id(0) * stride_m
    y_ptrs = y_ptr + row_off + lanes
    dy_ptrs = dy_ptr + row_off + lanes
    left = N
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    while left > 0:
        keep = lanes < left
        y = tl.load(y_ptrs, mask=keep, other=0.0)
        g = tl.load(dy_ptrs, mask=keep, other=0.0)
        partial += y.to(tl.float32) * g.to(tl.float32)
        y_ptrs += BLOCK_N
        dy_ptrs += BLOCK_N
        left -= BLOCK_N
    total = tl.sum(partial, axis=0)

    y_ptrs = y_ptr + row_off + lanes
    dy_ptrs = dy_ptr + row_off + lanes
    dx_ptrs = dx_ptr + row_off + lanes
    left = N
    while left > 0:
        keep = lanes < left
        y = tl.load(y_ptrs, mask=keep, other=0.0).to(tl.float32)
        g = tl.load(dy_ptrs, mask=keep, other=0.0).to(tl.float32)
        tl.store(dx_ptrs, (y * (g - total)).to(dx_ptr.dtype.element_ty), mask=keep)
        y_ptrs += BLOCK_N
        dy_ptrs += BLOCK_N
        dx_ptrs += BLOCK_N
        left -= BLOCK_N
