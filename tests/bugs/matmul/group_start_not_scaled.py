"""Grouped ordering: the first row-tile of a group is the group's index, not index * GROUP_M.

expect: unwritten_output
"""

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
    first_m = program // (GROUP_M * tiles_n)
    group_size = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (program % (GROUP_M * tiles_n)) % group_size
    pid_n = (program % (GROUP_M * tiles_n)) // group_size
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # Rows past M and columns past N (in the last tiles) are wrapped back into the matrix: they load real
    # elements, so the loop needs no mask on M or N, and what they compute is never stored.
    a_ptrs = a_ptr + (rows % M)[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + (cols % N)[None, :] * stride_bn
    # Accumulate in float32 even for float16 inputs: tl.dot multiplies in the inputs' precision and adds
    # into the accumulator's.
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    # Whole K blocks without masks: on a GPU, unmasked loads whose pointers simply advance are the
    # cheapest to pipeline.
    for _ in range(K // BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    # The partial last K block: masked lanes load 0, which adds nothing to the dot product.
    if K % BLOCK_K != 0:
        a = tl.load(a_ptrs, mask=ks[None, :] < K % BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=ks[:, None] < K % BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
