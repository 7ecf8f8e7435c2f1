"""Softmax backward with a custom tl.reduce combine function, int64 row offsets and tl.fma for the update
dx = y * dy - y * <y, dy> (one fused multiply-add per element)."""
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK_N), BLOCK_N)
    mask = offs < N
    base = row * stride_m
    y = tl.load(y_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(dy_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    inner = tl.reduce(y * g, axis=0, combine_fn=_add)
    dx = tl.fma(-y, inner, y * g)
    tl.store(dx_ptr + base + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
