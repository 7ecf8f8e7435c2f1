"""Single-block softmax that loads without other= and pads with tl.where(mask, x, NEG_INF) instead, the
mask combining the column test with a scalar row test; NEG_INF is a module-level tl.constexpr(float("-inf"))."""
import triton
import triton.language as tl

NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = (cols < N) & (row >= 0)
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask)
    x = tl.where(mask, x.to(tl.float32), NEG_INF)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_om + cols, num / den, mask=mask)
