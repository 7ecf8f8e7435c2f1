"""Stores each row's exponentials into the output, then loads them back in reverse to sum them: the lane that
reads element N-1-j is another thread, in another warp, than the one that stored it, and nothing orders the store
before the load (no tl.debug_barrier()). The interpreter runs the whole store first; a GPU need not.

expect: race
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=float("-inf")).to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride_om + cols, numerator.to(out_ptr.dtype.element_ty), mask=mask)
    back = tl.load(out_ptr + row * stride_om + (N - 1 - cols), mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_om + cols, (numerator / tl.sum(back, axis=0)).to(out_ptr.dtype.element_ty),
             mask=mask)
