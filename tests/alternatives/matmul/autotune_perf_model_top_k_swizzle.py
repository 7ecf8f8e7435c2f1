"""Autotuned with configs over tiles, warps and stages, pruned by early_config_prune (shared memory budget of
the stages) and ranked by a perf_model (estimated time from the number of waves of tiles), keeping top_k=3 to
time; tile order from tl.swizzle2d on a linear program id reshaped to the tile grid."""
import triton
import triton.language as tl


def _smem_prune(configs, named_args, **kwargs):
    kept = []
    for c in configs:
        bm, bn, bk = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]
        if (bm + bn) * bk * 2 * c.num_stages <= 228 * 1024:
            kept.append(c)
    return kept


def _perf_model(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, **kwargs):
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    waves = triton.cdiv(tiles, 132)
    per_tile = BLOCK_M * BLOCK_N * K * 2 / (989e12 / 132)
    loads = (BLOCK_M + BLOCK_N) * K * 2 / (3.35e12 / 132)
    return waves * max(per_tile, loads / max(1, num_stages - 1))


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
             for bm, bn, w in ((128, 256, 8), (128, 128, 8), (64, 128, 4), (128, 64, 4))
             for bk in (32, 64) for s in (3, 4)],
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": _smem_prune, "perf_model": _perf_model, "top_k": 3},
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    grid_m = tl.num_programs(0)
    grid_n = tl.num_programs(1)
    lin = tl.program_id(0) * grid_n + tl.program_id(1)
    pid_m, pid_n = tl.swizzle2d(lin // grid_n, lin % grid_n, grid_m, grid_n, 4)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
