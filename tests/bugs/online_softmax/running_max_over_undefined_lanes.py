"""The last chunk of the row is loaded without other= and the running max taken over every lane, the masked-off
ones included; the exp is masked after. Right over the grader's NaN (tl.max passes over it), wrong on a GPU,
whose 0 there wins the max of a row of negative numbers.

expect: undefined_lanes
"""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    m = float("-inf")
    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.where(cols < N, tl.exp(x - m_new), 0.0), axis=0)
        m = m_new
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N).to(tl.float32)
        tl.store(out_ptr + row * stride_om + cols, (tl.exp(x - m) / s).to(out_ptr.dtype.element_ty), mask=cols < N)
