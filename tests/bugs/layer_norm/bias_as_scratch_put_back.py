"""Program 0 uses the bias, which every program reads, as scratch: it stores its normalised row there, reads it
back, and puts the bias back before it ends. The interpreter runs one program at a time, so no other program
ever sees it; on a GPU the other programs read the bias while program 0 has its row in it.

expect: race
"""
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    mean = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mean += tl.sum(tl.load(x_ptr + row * stride_xm + cols, mask=cols < N, other=0.0).to(tl.float32), axis=0)
    mean = mean / N
    var = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        var += tl.sum(d * d, axis=0)
    rstd = 1.0 / tl.sqrt(var / N + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        y = (x - mean) * rstd * w
        if row == 0:
            tl.store(b_ptr + cols, y.to(b_ptr.dtype.element_ty), mask=mask)
            y = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(b_ptr + cols, b, mask=mask)
        tl.store(out_ptr + row * stride_om + cols, (y + b.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=mask)
