"""Grouped tile order (as in the matmul tutorial), the group's first row-tile not multiplied by GROUP_M.

expect: unwritten_output
"""

import triton
import triton.language as tl


@triton.jit
def matmul_bias_leaky_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_K: tl.constexpr):
    GROUP_M: tl.constexpr = 8
    tiles_m, tiles_n = tl.num_programs(0), tl.num_programs(1)
    program = tl.program_id(0) * tiles_n + tl.program_id(1)
    first_m = program // (GROUP_M * tiles_n)  # should be (program // (GROUP_M * tiles_n)) * GROUP_M
    group_size = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (program % (GROUP_M * tiles_n)) % group_size
    pid_n = (program % (GROUP_M * tiles_n)) // group_size
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=((k + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    # The epilogue works on the float32 tile still in registers: one bias per column, then the activation.
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = tl.where(acc >= 0, acc, 0.01 * acc)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
