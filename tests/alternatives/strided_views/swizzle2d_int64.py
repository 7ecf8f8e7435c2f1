"""Add one to a strided 2-D view: programs renumbered with tl.swizzle2d over a linear id, int64 offsets."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   GROUP: tl.constexpr = 4):
    n_m = tl.num_programs(0)
    n_n = tl.num_programs(1)
    lin = tl.program_id(0) * n_n + tl.program_id(1)
    pid_m, pid_n = tl.swizzle2d(lin // n_n, lin % n_n, n_m, n_n, GROUP)
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ptrs = x_ptr + rm[:, None] * stride_m + rn[None, :] * stride_n
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(ptrs, tl.load(ptrs, mask=mask) + 1, mask=mask)
