"""An unmasked tuning configuration beside one that leaves MASKED at the kernel's default (on), and an
early_config_prune that keeps the unmasked one only for sizes every block divides, reading a configuration's MASKED
with the same default: the autotuner never launches it on a ragged size."""
import triton
import triton.language as tl


def unmasked_only_for_whole_blocks(configs, named_args, **kwargs):
    whole = named_args["n_elements"] % 4096 == 0
    return [config for config in configs if config.kwargs.get("MASKED", True) or whole]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": unmasked_only_for_whole_blocks})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr = True):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements if MASKED else None
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
