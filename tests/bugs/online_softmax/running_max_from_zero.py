"""The running max starts at 0, not -inf: a row whose every value is far below 0 underflows exp to 0
everywhere and divides 0 by 0.

expect: nonfinite
"""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    # First pass: the running max m and the sum s of exp(x - m), over blocks of the row.
    m = tl.max(tl.zeros([BLOCK_N], tl.float32), axis=0)  # running max starts at 0
    s = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # The terms summed so far were relative to the old max: rescale them to the new one.
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    # Second pass: normalise and store.
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        softmax = tl.exp(x - m) / s
        tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=cols < N)
