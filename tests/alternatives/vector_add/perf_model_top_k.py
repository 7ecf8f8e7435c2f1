"""Autotune pruned the way triton.ops' matmul did: early_config_prune drops the blocks far larger than the
vector, then a perf_model ranks what is left by an estimated time and top_k keeps the best two to time."""
import triton
import triton.language as tl


def _early_prune(configs, named_args, **kwargs):
    n = named_args["n_elements"]
    kept = [c for c in configs if c.kwargs["BLOCK_SIZE"] <= max(1024, triton.next_power_of_2(n))]
    return kept if kept else configs[:1]


def _estimate(n_elements, BLOCK_SIZE, num_warps, **kwargs):
    # waves of programs over 132 SMs, each moving 3 * BLOCK_SIZE * 4 bytes; lightly penalise few warps
    programs = triton.cdiv(n_elements, BLOCK_SIZE)
    waves = triton.cdiv(programs, 132 * 4)
    return waves * BLOCK_SIZE * 12 / (num_warps * 32)


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": 512}, num_warps=2),
             triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
             triton.Config({"BLOCK_SIZE": 2048}, num_warps=4),
             triton.Config({"BLOCK_SIZE": 4096}, num_warps=8)],
    key=["n_elements"],
    prune_configs_by={"early_config_prune": _early_prune, "perf_model": _estimate, "top_k": 2},
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)
