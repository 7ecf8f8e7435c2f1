"""The tile is loaded without other=, and its row max taken over the masked-off lanes leaks into the result
(less the row max taken right): nothing here, as tl.max passes over the grader's NaN; on a GPU the padding holds
0, which wins the max of a row of negative numbers, and the in-place result is off by it.

expect: undefined_lanes
"""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    pointers = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(pointers, mask=mask)
    padded_max = tl.max(x, axis=1)
    row_max = tl.max(tl.where(mask, x, float("-inf")), axis=1)
    tl.store(pointers, x + 1 + (padded_max - row_max)[:, None], mask=mask)
