"""Online softmax whose loop covers UNROLL blocks per iteration with an inner tl.static_range (UNROLL a
module-level tl.constexpr(2**1)), in base 2 with LOG2E = tl.constexpr(log2(math.e)) after `from math import log2`."""
import math
from math import log2

import torch
import triton
import triton.language as tl

UNROLL = tl.constexpr(2**1)
LOG2E = tl.constexpr(log2(math.e))


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om
    m = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    l = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    for start in range(0, N, UNROLL * BLOCK_N):
        for u in tl.static_range(UNROLL):
            cols = start + u * BLOCK_N + offs
            x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32) * LOG2E
            m_new = tl.maximum(m, tl.max(x, axis=0))
            # a fully padded block leaves m at -inf only if nothing came before it, which the first block rules out
            l = l * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new), axis=0)
            m = m_new
    for start in range(0, N, UNROLL * BLOCK_N):
        for u in tl.static_range(UNROLL):
            cols = start + u * BLOCK_N + offs
            x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32) * LOG2E
            tl.store(out_row + cols, (tl.exp2(x - m) / l).to(out_ptr.dtype.element_ty), mask=cols < N)


if __name__ == "__main__":
    x = torch.randn(33, 3000, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    online_softmax_kernel[(33,)](x, y, 3000, x.stride(0), y.stride(0), BLOCK_N=256)
    torch.testing.assert_close(y, torch.softmax(x.float(), 1).half())
