"""A pruner that takes the ragged part off the vector's length with `whole -= whole % BLOCK`, on the int it read from
the launch's arguments, and keeps the unmasked configuration only where nothing was taken off."""
import triton
import triton.language as tl


def keep_unmasked_on_whole_blocks(configs, named_args, **kwargs):
    kept = []
    for config in configs:
        whole = named_args["n_elements"]
        whole -= whole % config.kwargs["BLOCK_SIZE"]
        if config.kwargs.get("MASKED", True) or whole == named_args["n_elements"]:
            kept.append(config)
    return kept


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": keep_unmasked_on_whole_blocks})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr = True):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements if MASKED else None
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
