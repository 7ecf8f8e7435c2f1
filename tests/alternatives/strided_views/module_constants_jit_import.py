"""`from triton import jit` / `from triton.language import constexpr`, module constants (ONE =
tl.constexpr(1), ACC_DTYPE = tl.float32, `import torch, math`, `from math import log2`) and a
@triton.constexpr_function that picks the row sub-block."""
import torch, math
from math import log2

import triton
import triton.language as tl
from triton import jit
from triton.language import constexpr

ONE = tl.constexpr(1)
ACC_DTYPE = tl.float32
ROWS_PER_STEP = tl.constexpr(2**3)
LN2 = tl.constexpr(math.log(2.0))
LOG2_ROWS = tl.constexpr(int(log2(8)))


@triton.constexpr_function
def row_step(block_m, rows_per_step):
    # never more rows per step than the tile has
    return min(block_m, rows_per_step)


@jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: constexpr, BLOCK_N: constexpr):
    STEP: constexpr = row_step(BLOCK_M, ROWS_PER_STEP)
    tl.static_assert(ROWS_PER_STEP == 2 ** LOG2_ROWS)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    for r0 in tl.static_range(0, BLOCK_M, STEP):
        rows = tl.program_id(0) * BLOCK_M + r0 + tl.arange(0, STEP)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
        v = tl.load(ptrs, mask=mask, other=0.0).to(ACC_DTYPE)
        tl.store(ptrs, (v + ONE).to(x_ptr.dtype.element_ty), mask=mask)


if __name__ == "__main__":
    x = torch.zeros(9, 33)
    add_one_kernel[(math.ceil(9 / 8), math.ceil(33 / 32))](x, 9, 33, 33, 1, BLOCK_M=8, BLOCK_N=32)
    assert bool((x == 1).all())
