"""Each chunk is loaded twice, the second time past the L1 (.cg): twice the load instructions and twice the
L2 traffic of the row, and a second round trip to the L2 in every iteration."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4)], key=["N"])
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    first = tl.zeros([BLOCK_N], dtype=tl.float32)
    second = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        pointers = x_ptr + row * stride_m + cols * stride_n
        # Two loads of the same chunk (another cache modifier, so the compiler keeps both).
        first += tl.load(pointers, mask=cols < N, other=0.0).to(tl.float32)
        second += tl.load(pointers, mask=cols < N, other=0.0, cache_modifier=".cg").to(tl.float32)
    tl.store(out_ptr + row, (tl.sum(first, axis=0) + tl.sum(second, axis=0)) * 0.5)
