"""Module-level constants in several forms (`import torch, math`, `from math import log2`,
tl.constexpr(1), tl.constexpr(2**3), tl.constexpr(float("-inf")), tl.constexpr(math.log2(math.e))) and a
@triton.constexpr_function: the block is processed as NUM_CHUNKS chunks with tl.static_range."""
import torch, math
from math import log2

import triton
import triton.language as tl

ONE = tl.constexpr(1)
MAX_CHUNKS = tl.constexpr(2**3)
NEG_INF = tl.constexpr(float("-inf"))
LOG2E = tl.constexpr(math.log2(math.e))
LOG2_MIN_CHUNK = tl.constexpr(int(log2(32)))  # chunks of at least 32 elements


@triton.constexpr_function
def num_chunks(block_size, max_chunks, log2_min_chunk):
    # as many chunks as possible, up to max_chunks, each at least 2**log2_min_chunk wide
    return max(1, min(max_chunks, block_size >> log2_min_chunk))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    NUM_CHUNKS: tl.constexpr = num_chunks(BLOCK_SIZE, MAX_CHUNKS, LOG2_MIN_CHUNK)
    CHUNK: tl.constexpr = BLOCK_SIZE // NUM_CHUNKS
    tl.static_assert(CHUNK * NUM_CHUNKS == BLOCK_SIZE)
    tl.static_assert(LOG2E > ONE)
    base = tl.program_id(0) * BLOCK_SIZE
    for c in tl.static_range(0, NUM_CHUNKS, ONE):
        offs = base + c * CHUNK + tl.arange(0, CHUNK)
        mask = offs < n_elements
        # the padding value never reaches memory: those lanes are masked on the store
        x = tl.load(x_ptr + offs, mask=mask, other=NEG_INF)
        y = tl.load(y_ptr + offs, mask=mask, other=NEG_INF)
        tl.store(out_ptr + offs, x + y, mask=mask)


if __name__ == "__main__":
    x, y = torch.randn(5003), torch.randn(5003)
    out = torch.empty_like(x)
    add_kernel[(math.ceil(5003 / 64),)](x, y, out, 5003, BLOCK_SIZE=64)
    assert torch.equal(out, x + y)
