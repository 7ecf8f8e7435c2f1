"""Each chunk's running sum (tl.cumsum) and its last lane picked with tl.where, added to a scalar across a
tl.range loop."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in tl.range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0).to(tl.float32)
        running = tl.cumsum(x, axis=0)
        total += tl.sum(tl.where(tl.arange(0, BLOCK_N) == BLOCK_N - 1, running, 0.0), axis=0)
    tl.store(out_ptr + row, total)
