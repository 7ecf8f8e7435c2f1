"""Fused matmul epilogue autotuned over GROUP_M / warps / stages (configs pruned by the problem size), with the
grouped program order rebuilt from the 2-D grid, the accumulator initialised with the bias, and leaky ReLU as
max(x, 0) + slope * min(x, 0)."""
import torch
import triton
import triton.language as tl

NEGATIVE_SLOPE = tl.constexpr(0.01)


def _prune(configs, named_args, **kwargs):
    num_m = triton.cdiv(named_args["M"], 16)
    kept = [c for c in configs if c.kwargs["GROUP_M"] <= max(num_m, 1)]
    return kept or configs[:1]


@triton.autotune(
    configs=[triton.Config({"GROUP_M": g}, num_warps=w, num_stages=s)
             for g in (1, 4, 8) for w in (4, 8) for s in (3, 4)],
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": _prune},
)
@triton.jit
def matmul_bias_leaky_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Re-number the (m, n) grid so that GROUP_M row tiles share their B tiles in L2.
    num_pid_m = tl.num_programs(0)
    num_pid_n = tl.num_programs(1)
    pid = tl.program_id(0) * num_pid_n + tl.program_id(1)
    group = pid // (GROUP_M * num_pid_n)
    first_m = group * GROUP_M
    group_size = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size)
    pid_n = (pid % (GROUP_M * num_pid_n)) // group_size

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc = tl.broadcast_to(bias[None, :], (BLOCK_M, BLOCK_N))
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if a.dtype == tl.float32:
            acc += tl.dot(a, b, input_precision="ieee")
        else:
            acc += tl.dot(a, b)
    out = tl.maximum(acc, 0.0) + NEGATIVE_SLOPE * tl.minimum(acc, 0.0)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, out.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
