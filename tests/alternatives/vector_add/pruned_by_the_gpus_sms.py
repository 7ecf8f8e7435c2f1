"""Vector add whose early_config_prune asks torch for the GPU's SMs, as libraries size their grids: the unmasked
configuration only where its block divides the length, and of those kept the blocks that give every SM a program,
where any does."""
import torch
import triton
import triton.language as tl


def prune(configs, named_args, **kwargs):
    n = named_args["n_elements"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    kept = [c for c in configs if c.kwargs["EVEN"] == (n % c.kwargs["BLOCK_SIZE"] == 0)]
    filling = [c for c in kept if triton.cdiv(n, c.kwargs["BLOCK_SIZE"]) >= sms]
    return filling or kept


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": b, "EVEN": e}, num_warps=4)
                          for b in (128, 1024) for e in (True, False)],
                 key=["n_elements"], prune_configs_by={"early_config_prune": prune})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
