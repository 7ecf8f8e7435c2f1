"""Layer norm: pass 1 mean, pass 2 store x - mean into out and sum squares, pass 3 reload the centred values with
offsets clamped to the row (no mask on the load), store masked."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    sq = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
        sq += d * d
        tl.store(o_row + cols, d.to(out_ptr.dtype.element_ty), mask=mask)
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        safe = tl.minimum(cols, N - 1)
        d = tl.load(o_row + safe).to(tl.float32)
        w = tl.load(w_ptr + safe).to(tl.float32)
        b = tl.load(b_ptr + safe).to(tl.float32)
        tl.store(o_row + cols, (d * rstd * w + b).to(out_ptr.dtype.element_ty), mask=cols < N)
