"""The row is loaded without other= and its max taken over every lane of the block, the masked-off ones
included; only the exp is masked. With NaN there tl.max passes over them and the rows come out right; on a GPU
they hold 0, which wins the max of a row of negative numbers: every exp underflows and the row is 0 / 0.

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
    m = tl.max(x, axis=0)
    num = tl.where(mask, tl.exp(x - m), 0.0)
    tl.store(out_ptr + row * stride_om + cols, (num / tl.sum(num, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)
