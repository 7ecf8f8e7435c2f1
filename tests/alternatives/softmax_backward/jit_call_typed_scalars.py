"""Softmax backward whose kernel is made by calling triton.jit(do_not_specialize=["N"]) on a plain function and
bound to the course's name, with typed scalar parameters (N: tl.int32, stride_m: tl.int64) and an int64 row offset."""
import triton
import triton.language as tl


def _softmax_bwd(y_ptr, dy_ptr, dx_ptr, N: tl.int32, stride_m: tl.int64, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    start = row * stride_m
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        y = tl.load(y_ptr + start + cols, mask=cols < N, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + start + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += y * dy
    dot = tl.sum(acc, axis=0)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        y = tl.load(y_ptr + start + cols, mask=cols < N, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + start + cols, mask=cols < N, other=0.0).to(tl.float32)
        tl.store(dx_ptr + start + cols, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=cols < N)


softmax_backward_kernel = triton.jit(do_not_specialize=["N"])(_softmax_bwd)
