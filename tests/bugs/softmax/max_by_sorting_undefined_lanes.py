"""The row's maximum is read off the end of its sorted block, loaded without other=. NumPy sorts the NaN of the
masked-off lanes last, so element N-1 of the sort is the row's maximum here; on a GPU those lanes hold 0, which
sorts among a row's values: element N-1 is then not its maximum, and exp(x - m) overflows for rows of large values.

expect: undefined_lanes
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask).to(tl.float32)
    ordered = tl.sort(x)
    m = tl.sum(tl.where(cols == N - 1, ordered, 0.0), axis=0)
    num = tl.where(mask, tl.exp(x - m), 0.0)
    tl.store(out_ptr + row * stride_om + cols, (num / tl.sum(num, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)
