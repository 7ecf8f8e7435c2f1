"""A good configuration: chunks of 2048 columns on 8 warps, 8 floats per thread in 128-bit loads,
8 KB in flight per program per iteration."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 2048}, num_warps=8)], key=["N"])
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        partial += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(partial, axis=0))
