"""Consecutive lanes take columns BLOCK_N // 32 apart (the row walked down the columns of a 32-row view):
every warp load and store touches 32 sectors where 4 would do, and none is vectorised."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=8)], key=["N"])
@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    if BLOCK_N >= 32:
        # A permutation of the row: lane i takes column (i % 32) * (BLOCK_N // 32) + i // 32.
        cols = (cols % 32) * (BLOCK_N // 32) + cols // 32
    mask = cols < N
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=float("-inf")).to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    softmax = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=mask)
