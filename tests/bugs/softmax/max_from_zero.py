"""The row max taken with 0 (as if the max started at 0, not -inf): a row whose every value is far below 0
underflows exp to 0 everywhere and divides 0 by 0.

expect: nonfinite
"""
import triton
import triton.language as tl


# Warps for the GPU stage (BLOCK_N is the row length rounded up to a power of 2).
@triton.autotune(configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4),
                          triton.Config({}, num_warps=8), triton.Config({}, num_warps=16)], key=["N"])
@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    # -inf padding: exp(-inf) = 0 adds nothing to the sum, and -inf never wins the max.
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=float("-inf")).to(tl.float32)
    # Subtracting the row max keeps exp() <= 1: exp(89) already overflows float32.
    numerator = tl.exp(x - tl.maximum(tl.max(x, axis=0), 0.0))
    softmax = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=mask)
