"""Softmax on a [1, BLOCK_N] tile with @triton.jit helpers for the row max and row sum, each a tl.reduce with
its own combine function and keep_dims=True so the results broadcast back over the tile."""
import triton
import triton.language as tl


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def row_max(x):
    return tl.reduce(x, 1, _max_combine, keep_dims=True)


@triton.jit
def row_sum(x):
    return tl.reduce(x, 1, _add_combine, keep_dims=True)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) + tl.arange(0, 1)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    mask = (rows >= 0) & (cols < N)
    x = tl.load(x_ptr + rows * stride_xm + cols, mask=mask, other=float("-inf")).to(tl.float32)
    num = tl.exp(x - row_max(x))
    out = num / row_sum(num)
    tl.store(out_ptr + rows * stride_om + cols, out, mask=mask)
