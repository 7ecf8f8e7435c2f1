"""Softmax that keeps each row's exponentials in the output and reads them back reversed to sum them, with a
tl.debug_barrier() between the store and the load: every thread of the program has stored before any loads, so
the lanes that read what other lanes stored read it (slower than tl.sum of the registers, but right)."""
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
    tl.debug_barrier()
    back = tl.load(out_ptr + row * stride_om + (N - 1 - cols), mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_om + cols, (numerator / tl.sum(back, axis=0)).to(out_ptr.dtype.element_ty),
             mask=mask)
