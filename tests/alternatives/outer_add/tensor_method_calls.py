"""Tensor-method style: x.expand_dims(1).broadcast_to(...), comparisons on expanded index vectors and the
mask built in two steps (`mask = mask & ...`)."""
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    i = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    j = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + i, mask=i < M, other=0.0)
    y = tl.load(y_ptr + j, mask=j < N, other=0.0)
    tile = x.expand_dims(1).broadcast_to(BLOCK_M, BLOCK_N) + y.expand_dims(0)
    mask = i.expand_dims(1) < M
    mask = mask & (j.expand_dims(0) < N)
    tl.store(out_ptr + i.expand_dims(1) * N + j.expand_dims(0), tile, mask=mask)
