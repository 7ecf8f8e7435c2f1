"""Row as a [1, BLOCK_N] tile (keep_dims reductions), int64 row offsets, dx written as one fma:
dx = fma(-y, <dy, y>, y * dy). Autotuned over warps with the configs in a module-level list."""
import triton
import triton.language as tl

CONFIGS = [triton.Config({}, num_warps=w) for w in (1, 2, 4, 8)]


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)[None, :]
    mask = cols < N
    off = row * stride_m + cols
    y = tl.load(y_ptr + off, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + off, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=1, keep_dims=True)
    dx = tl.fma(-y, dot, y * dy)
    tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=mask)
