"""Accumulate in float64 (the loads upcast to tl.float64, the sum stored back as float32) over a loop counted
in blocks, tl.cdiv(N, BLOCK_N) iterations, with the column offsets and the mask recomputed from the block index."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float64)
    for blk in range(tl.cdiv(N, BLOCK_N)):
        cols = blk * BLOCK_N + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + pid * stride_m + cols * stride_n, mask=cols < N, other=0.0).to(tl.float64)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0).to(tl.float32))
