"""A pruner that counts with `total += ...` and keeps with `kept += [config]`, and a compile-time helper that rounds
up with augmented assignments to its parameter's copy: augmented assignments on names bound to new values change
nothing another launch sees."""
import triton
import triton.language as tl


@triton.constexpr_function
def rounded_up(n):
    x = n
    x -= 1
    x |= x >> 1
    x |= x >> 2
    return x + 1


def early_config_prune(configs, named_args, **kwargs):
    kept = []
    total = 0
    for config in configs:
        total += config.kwargs["BLOCK_SIZE"]
        if config.kwargs.get("MASKED", True) or named_args["n_elements"] % 4096 == 0:
            kept += [config]
    return kept


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": early_config_prune})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr = True):
    offsets = tl.program_id(0) * rounded_up(BLOCK_SIZE) + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements if MASKED else None
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
