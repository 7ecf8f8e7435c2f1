"""A configuration for short vectors that computes its offsets in 16 bits, and an early_config_prune that keeps it
for vectors of fewer than 2**15 elements only: beyond, the offsets would wrap, but the autotuner never launches it
there. The benchmark's vector is longer: only the general configuration is timed."""
import triton
import triton.language as tl


def short_offsets_for_short_vectors(configs, named_args, **kwargs):
    short = named_args["n_elements"] < 2 ** 15
    return [config for config in configs if short or not config.kwargs["SHORT"]]


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "SHORT": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024, "SHORT": True}, num_warps=4)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": short_offsets_for_short_vectors})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, SHORT: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if SHORT:
        offsets = offsets.to(tl.int16)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
