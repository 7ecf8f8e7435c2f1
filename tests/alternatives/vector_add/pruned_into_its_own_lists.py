"""A pruner that rebinds its `configs` parameter to the masked configurations, then `+=` the unmasked ones where the
vector is whole blocks, from a copy made with list(): augmented assignments on lists the pruner made itself."""
import triton
import triton.language as tl


def keep_unmasked_on_whole_blocks(configs, named_args, **kwargs):
    candidates = list(configs)
    configs = [config for config in candidates if config.kwargs["MASKED"]]
    whole = [config for config in candidates if named_args["n_elements"] % config.kwargs["BLOCK_SIZE"] == 0]
    configs += [config for config in whole if not config.kwargs["MASKED"]]
    candidates += []
    return configs


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024, "MASKED": True}, num_warps=8)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": keep_unmasked_on_whole_blocks})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements if MASKED else None
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
