"""Layer norm in three sweeps over the row (mean, centred variance, normalise), each a tl.range loop with
num_stages, the statistics computed by @triton.jit helpers called with keyword arguments, int64 row offsets,
tl.math.rsqrt and tl.fma for y = x_hat * w + b."""
import triton
import triton.language as tl


@triton.jit
def _row_mean(row_ptr, N, BLOCK_N: tl.constexpr):
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N, num_stages=2):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(row_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    return tl.sum(acc, axis=0) / N


@triton.jit
def _row_rstd(row_ptr, mean, N, eps, BLOCK_N: tl.constexpr):
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N, num_stages=2):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(row_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc = tl.fma(d, d, acc)
    var = tl.sum(acc, axis=0) / N
    return tl.math.rsqrt(var + eps)


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    mean = _row_mean(row_ptr=x_row, N=N, BLOCK_N=BLOCK_N)
    rstd = _row_rstd(row_ptr=x_row, mean=mean, N=N, eps=eps, BLOCK_N=BLOCK_N)
    for start in tl.range(0, N, BLOCK_N, num_stages=2):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.fma((x - mean) * rstd, w, b)
        tl.store(o_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
