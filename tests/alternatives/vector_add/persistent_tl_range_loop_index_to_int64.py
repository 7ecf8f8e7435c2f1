"""A persistent grid-stride loop (GPU MODE lecture style) over the blocks: `for block in tl.range(pid, num_blocks,
tl.num_programs(0))`, each block's start computed in int64 from the loop variable with .to(tl.int64) so that
vectors past 2**31 elements would not overflow."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    num_blocks = tl.cdiv(n_elements, BLOCK_SIZE)
    for block in tl.range(tl.program_id(0), num_blocks, tl.num_programs(0)):
        offsets = block.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
