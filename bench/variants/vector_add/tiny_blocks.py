"""32 elements per program: each program moves 384 bytes per round trip to memory, too little to keep DRAM busy.
The reference solution's kernel, launched on the GPU with one configuration."""
import triton
import triton.language as tl


# Block sizes and warps for the GPU stage; the CPU grader uses each case's own block size.
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    # The last block runs past the end when n_elements is not a multiple of BLOCK_SIZE.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


GPU_CONFIGS = [triton.Config({"BLOCK_SIZE": 32}, num_warps=1)]
