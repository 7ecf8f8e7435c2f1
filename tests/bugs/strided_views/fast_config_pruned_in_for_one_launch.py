"""A fast tuning configuration that adds 2 instead of 1, kept by the pruner only where N % 32 == 0: no case's first
launch has such an N, but the second launch of a split case (N=32) does, and there the autotuner may launch it.

expect: mismatch
"""
import triton
import triton.language as tl


def prune(configs, named_args, **kwargs):
    return [c for c in configs if not c.kwargs["FAST"] or named_args["N"] % 32 == 0]


@triton.autotune(configs=[triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "FAST": False}),
                          triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "FAST": True})],
                 key=["M", "N"], prune_configs_by={"early_config_prune": prune})
@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FAST: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    if FAST:
        tl.store(ptrs, tl.load(ptrs, mask=mask) + 2, mask=mask)  # wrong
    else:
        tl.store(ptrs, tl.load(ptrs, mask=mask) + 1, mask=mask)
