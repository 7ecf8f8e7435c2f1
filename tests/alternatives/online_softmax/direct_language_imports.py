"""Online softmax written with the language's functions imported by name (from triton.language import
program_id, arange, load, store, ...) instead of through the tl. prefix."""
import triton
import triton.language as tl
from triton.language import arange, exp, load, maximum, program_id, store


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = program_id(0)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om
    m = tl.full([], float("-inf"), tl.float32)
    s = tl.full([], 0.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + arange(0, BLOCK_N)
        x = load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = maximum(m, tl.max(x, axis=0))
        s = s * exp(m - m_new) + tl.sum(exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, BLOCK_N):
        cols = start + arange(0, BLOCK_N)
        x = load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        store(out_row + cols, exp(x - m) / s, mask=cols < N)
