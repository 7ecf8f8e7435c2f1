"""An unmasked fast path for the largest tuning configuration's block, and an early_config_prune that keeps that
configuration off every size it does not divide: on a GPU the autotuner launches it only on whole blocks."""
import triton
import triton.language as tl

FAST_BLOCK = 4096


def fast_path_on_whole_blocks_only(configs, named_args, **kwargs):
    return [config for config in configs
            if config.kwargs["BLOCK_SIZE"] < FAST_BLOCK or named_args["n_elements"] % FAST_BLOCK == 0]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 4096}, num_warps=8)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": fast_path_on_whole_blocks_only})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if BLOCK_SIZE >= 4096:  # launched only where FAST_BLOCK divides n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
