"""Two passes of an early_config_prune written as Triton's own matmul pruner was: `pruned_configs = []` bound once a
pass, configurations appended to it, `configs` rebound to the first pass's list; the second keeps EVEN_N off sizes
its block does not divide."""
import triton
import triton.language as tl


def early_config_prune(configs, named_args, **kwargs):
    n_elements = named_args["n_elements"]
    pruned_configs = []
    for config in configs:
        if config.num_warps <= 8:
            pruned_configs.append(config)
    configs = pruned_configs

    pruned_configs = []
    for config in configs:
        kw = config.kwargs
        if kw.get("EVEN_N", False) and n_elements % kw["BLOCK_SIZE"] != 0:
            continue
        pruned_configs.append(config)
    return pruned_configs


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 2048, "EVEN_N": True}, num_warps=8),
                          triton.Config({"BLOCK_SIZE": 512, "EVEN_N": True}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024}, num_warps=4)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": early_config_prune})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN_N: tl.constexpr = False):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = None if EVEN_N else offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
