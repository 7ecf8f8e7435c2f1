"""Consecutive lanes take elements BLOCK_SIZE // 32 apart (the block walked down the columns of a 32-row view):
each warp request touches 32 sectors where 4 would do, and no load or store is vectorised."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4)], key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    lane = tl.arange(0, BLOCK_SIZE)
    if BLOCK_SIZE >= 32:
        # A permutation of the block: lane i takes element (i % 32) * (BLOCK_SIZE // 32) + i // 32.
        lane = (lane % 32) * (BLOCK_SIZE // 32) + lane // 32
    offsets = pid * BLOCK_SIZE + lane
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
