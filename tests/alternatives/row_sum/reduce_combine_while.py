"""Row sum with a while loop, a scalar float32 running total, and tl.reduce with a @triton.jit combine
function instead of tl.sum; the parameters carry their own names."""
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def row_sum_kernel(src, dst, n, row_stride, col_stride, BLOCK_N: tl.constexpr):
    r = tl.program_id(0)
    offsets = tl.arange(0, BLOCK_N)
    row_start = src + r * row_stride
    total = 0.0
    start = 0
    while start < n:
        cols = start + offsets
        x = tl.load(row_start + cols * col_stride, mask=cols < n, other=0.0).to(tl.float32)
        total += tl.reduce(x, 0, _add)
        start += BLOCK_N
    tl.store(dst + r, total)
