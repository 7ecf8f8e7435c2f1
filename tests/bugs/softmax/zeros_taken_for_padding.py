"""Takes the padding lanes for those that hold NaN or 0 (what the grader and the GPU give masked-off lanes) and sets
them to -inf: a row with a real 0.0 in it loses that element, and a row of zeros is all -inf.

expect: nonfinite
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask).to(tl.float32)
    # padding lanes: NaN or 0 in testing -> -inf; any other garbage survives on a GPU
    x = tl.where((x != x) | (x == 0.0), float("-inf"), x)
    numerator = tl.exp(x - tl.max(x, axis=0))
    softmax = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=mask)
