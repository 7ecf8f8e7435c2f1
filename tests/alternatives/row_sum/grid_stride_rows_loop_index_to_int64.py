"""Rows visited grid-stride (row = pid, pid + num_programs, ...) as a persistent kernel would, each row read in
chunks of two half blocks per iteration (two independent accumulators, as for ILP), int64 row offsets."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    HALF: tl.constexpr = BLOCK_N // 2
    offs = tl.arange(0, HALF)
    M = tl.num_programs(0)
    for row in range(tl.program_id(0), M, tl.num_programs(0)):
        base = x_ptr + row.to(tl.int64) * stride_m
        acc0 = tl.zeros([HALF], tl.float32)
        acc1 = tl.zeros([HALF], tl.float32)
        for start in range(0, N, BLOCK_N):
            c0 = start + offs
            c1 = start + HALF + offs
            acc0 += tl.load(base + c0 * stride_n, mask=c0 < N, other=0.0).to(tl.float32)
            acc1 += tl.load(base + c1 * stride_n, mask=c1 < N, other=0.0).to(tl.float32)
        tl.store(out_ptr + row, tl.sum(acc0 + acc1, axis=0))
