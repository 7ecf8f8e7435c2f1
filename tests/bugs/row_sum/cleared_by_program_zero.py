"""Program 0 clears every row's sum, then each program adds its own with an atomic: right only where program 0
runs first. Its memory accesses are all atomics, which programs may share: only the order tells.

expect: order_dependent
"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    if row == 0:
        rows = tl.arange(0, 64)
        bits = out_ptr.to(tl.pointer_type(tl.int32))  # 0.0 is all zero bits (the interpreter exchanges no floats)
        tl.atomic_xchg(bits + rows, tl.zeros([64], dtype=tl.int32), mask=rows < tl.num_programs(0))
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        partial += x.to(tl.float32)
    tl.atomic_add(out_ptr + row, tl.sum(partial, axis=0))
