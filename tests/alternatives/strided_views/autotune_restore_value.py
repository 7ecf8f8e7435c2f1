"""Add one in place, autotuned over warps: restore_value puts x back after every benchmarking run (without it the
autotuner's trial launches would add one several times), exactly as Triton's docs recommend for in-place kernels."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)],
                 key=["M", "N"], restore_value=["x_ptr"])
@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs = rm[:, None] * stride_m + rn[None, :] * stride_n
    inside = (rm < M)[:, None] & (rn < N)[None, :]
    x = tl.load(x_ptr + offs, mask=inside)
    tl.store(x_ptr + offs, x + 1, mask=inside)
