"""A running sum per chunk with tl.associative_scan and a combine function of its own; the last element of
each chunk's scan is added to a carry."""
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0).to(tl.float32)
        running = tl.associative_scan(x, 0, _add)
        carry += tl.sum(tl.where(tl.arange(0, BLOCK_N) == BLOCK_N - 1, running, 0.0), axis=0)
    tl.store(out_ptr + row, carry)
