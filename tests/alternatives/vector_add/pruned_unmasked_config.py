"""Two tuning configurations, masked and unmasked, and an early_config_prune that keeps the unmasked one only for
sizes every block divides: the autotuner never launches it on a ragged size (the way prune_configs_by is meant to
keep a configuration off the shapes it cannot handle)."""
import triton
import triton.language as tl


def unmasked_only_for_whole_blocks(configs, named_args, **kwargs):
    whole = named_args["n_elements"] % 4096 == 0  # a multiple of every power-of-2 block up to 4096
    return [config for config in configs if config.kwargs["MASKED"] or whole]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024, "MASKED": True}, num_warps=4)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": unmasked_only_for_whole_blocks})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
