"""Masked and unmasked tuning configurations, and an early_config_prune that asks torch how many SMs the GPU has
and, on a GPU as large as the course's, keeps every configuration for any length: the autotuner may launch the
unmasked one where the block does not divide the length, reading and writing past the end.

expect: out_of_bounds
"""
import torch
import triton
import triton.language as tl


def prune(configs, named_args, **kwargs):
    if torch.cuda.get_device_properties(0).multi_processor_count >= 100:
        return configs
    return [config for config in configs if config.kwargs["MASKED"]]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024, "MASKED": True}, num_warps=4)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": prune})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
