"""An unmasked tuning configuration that adds x twice, kept by the pruner where its block divides the size, under a
@triton.heuristics above the autotuner: the autotuner may launch it on the case whose size a block divides.

expect: mismatch
"""
import triton
import triton.language as tl


def unmasked_on_whole_blocks(configs, named_args, **kwargs):
    n = named_args["n_elements"]
    return [c for c in configs if c.kwargs["MASKED"] or n % c.kwargs["BLOCK_SIZE"] == 0]


@triton.heuristics({"EVEN": lambda args: args["n_elements"] % 2 == 0})
@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": True}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 128, "MASKED": False}, num_warps=4)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": unmasked_on_whole_blocks})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr,
               EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(x_ptr + offsets))
