"""The tile is built from one flat arange of BLOCK_M * BLOCK_N lanes, split into row and column by // and %,
and each lane's pointer computed from the strides; the loaded values are then tl.reshape'd into the 2-D tile
and back (a no-op here, as in kernels that move between 1-D and 2-D views)."""
import triton
import triton.language as tl


@triton.jit
def _tile_coords(pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    lane = tl.arange(0, BLOCK_M * BLOCK_N)
    return pid_m * BLOCK_M + lane // BLOCK_N, pid_n * BLOCK_N + lane % BLOCK_N


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows, cols = _tile_coords(tl.program_id(0), tl.program_id(1), BLOCK_M, BLOCK_N)
    mask = (rows < M) & (cols < N)
    ptrs = x_ptr + rows * stride_m + cols * stride_n
    x = tl.reshape(tl.load(ptrs, mask=mask), [BLOCK_M, BLOCK_N])
    y = tl.reshape(x + 1, [BLOCK_M * BLOCK_N])
    tl.store(ptrs, y, mask=mask)
