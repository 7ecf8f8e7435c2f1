"""Row sum whose lanes all exchange their running value into the row's one output with tl.atomic_xchg, for the
last lane's (the total) to win: the interpreter applies the lanes in order, a GPU's atomics in any order.

expect: race
"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        total += tl.sum(x.to(tl.float32), axis=0)
    lanes = tl.arange(0, BLOCK_N)
    running = tl.cumsum(tl.full([BLOCK_N], 1.0, tl.float32), axis=0) * (total / BLOCK_N)
    bits = out_ptr.to(tl.pointer_type(tl.int32))  # tl.atomic_xchg on the float's bits
    tl.atomic_xchg(bits + row + lanes * 0, running.to(tl.int32, bitcast=True))
