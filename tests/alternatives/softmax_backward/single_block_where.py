"""Softmax backward with the whole row in one block: loads without `other=`, masked lanes zeroed with tl.where,
dx = y * (dy - sum(y * dy)) in float32, and parameters named after the math (Y, DY, DX, n_cols, row_stride)."""
import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(Y, DY, DX, n_cols, row_stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    inb = c < n_cols
    y = tl.load(Y + r * row_stride + c, mask=inb)
    g = tl.load(DY + r * row_stride + c, mask=inb)
    y = tl.where(inb, y.to(tl.float32), 0.0)
    g = tl.where(inb, g.to(tl.float32), 0.0)
    s = tl.sum(y * g, axis=0)
    tl.store(DX + r * row_stride + c, (y * (g - s)).to(DX.dtype.element_ty), mask=inb)
