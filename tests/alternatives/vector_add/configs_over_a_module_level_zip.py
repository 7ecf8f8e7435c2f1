"""Tuning configurations made from a zip bound at the module's top level: an iterator, consumed once when the
configurations are made (no heuristic or pruner runs at launch to consume it again)."""
import triton
import triton.language as tl

BLOCKS_AND_WARPS = zip((1024, 2048), (4, 8))


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": block}, num_warps=warps) for block, warps in BLOCKS_AND_WARPS],
                 key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
