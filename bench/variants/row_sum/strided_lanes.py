"""Within each chunk, consecutive lanes read elements BLOCK_N // 32 apart (the chunk walked down the columns of a
32-row view): each warp load touches 32 sectors where 4 would do, and none is vectorised."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4)], key=["N"])
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    lane = tl.arange(0, BLOCK_N)
    if BLOCK_N >= 32:
        # A permutation of the chunk: lane i reads column (i % 32) * (BLOCK_N // 32) + i // 32.
        lane = (lane % 32) * (BLOCK_N // 32) + lane // 32
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + lane
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        partial += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(partial, axis=0))
