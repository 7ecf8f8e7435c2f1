"""Layer norm compiled per row length: N and eps are tl.constexpr parameters (annotated with `constexpr` imported
from triton.language), so the block loops are unrolled with tl.static_range; loads carry eviction-policy hints."""
import triton
import triton.language as tl
from triton.language import constexpr


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N: constexpr, stride_xm, stride_om, eps: constexpr,
                      BLOCK_N: constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in tl.static_range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
    mean = acc.sum(axis=0) / N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for off in tl.static_range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0, eviction_policy="evict_last").to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    rstd = tl.rsqrt(acc.sum(axis=0) / N + eps)
    for off in tl.static_range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + row * stride_om + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
