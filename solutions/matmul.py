"""Puzzle 8, matmul: C = A @ B with tl.dot on 2-D tiles, a loop over K with its tail, float32 accumulation."""
import triton
import triton.language as tl


# Tiles, warps and pipeline stages for the GPU stage; the CPU grader uses each case's own blocks.
@triton.autotune(configs=[triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=4),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
                          triton.Config({"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32}, num_warps=4, num_stages=4)],
                 key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Programs that run at the same time should share tiles of A and B in the L2 cache: renumber the grid so
    # that consecutive programs walk down a group of GROUP_M row-tiles before moving to the next columns.
    GROUP_M: tl.constexpr = 8
    tiles_m, tiles_n = tl.num_programs(0), tl.num_programs(1)
    program = tl.program_id(0) * tiles_n + tl.program_id(1)
    first_m = (program // (GROUP_M * tiles_n)) * GROUP_M
    group_size = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (program % (GROUP_M * tiles_n)) % group_size
    pid_n = (program % (GROUP_M * tiles_n)) // group_size
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # Accumulate in float32 even for float16 inputs: tl.dot multiplies in the inputs' precision and adds
    # into the accumulator's.
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        # The last K block is partial: masked lanes load 0, which adds nothing to the dot product.
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=((k + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
