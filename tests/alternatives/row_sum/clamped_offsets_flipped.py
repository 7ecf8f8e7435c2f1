"""Offsets clamped into the row (tl.clamp) instead of a load mask, the lanes past the end zeroed with tl.where,
neighbouring pairs of each chunk swapped (tl.flip on a reshaped block) before they are added; the row index in int64 and the loop bound from tl.cdiv."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK_N,), tl.float32)
    for start in range(0, tl.cdiv(N, BLOCK_N) * BLOCK_N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        safe = tl.clamp(cols, 0, N - 1)
        x = tl.load(x_ptr + row * stride_m + safe * stride_n)
        pairs = tl.reshape(tl.where(cols < N, x.to(tl.float32), 0.0), (BLOCK_N // 2, 2))
        acc += tl.reshape(tl.flip(pairs, 1), (BLOCK_N,))
    tl.store(out_ptr + row, tl.sum(acc))
