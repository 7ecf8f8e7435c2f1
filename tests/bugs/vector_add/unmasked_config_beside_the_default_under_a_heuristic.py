"""One tuning configuration turns the mask off, the other leaves MASKED at the kernel's default (on), under a
@triton.heuristics: the autotuner may launch the unmasked one on a size its block does not divide, reading and
writing past the end.

expect: out_of_bounds
"""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 256, "MASKED": False}, num_warps=4)],
                 key=["n_elements"])
@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr,
               MASKED: tl.constexpr = True):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements if MASKED else None
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
