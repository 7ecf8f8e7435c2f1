"""Welford over chunks: each chunk's count, mean and M2 come from tl.sum, and the chunk is merged into the
running (count, mean, M2) with Chan's formula, written as a jit helper returning a tuple; the normalise pass
uses 1 / tl.sqrt_rn. The last chunk's count is min(BLOCK_N, N - start), computed with tl.minimum."""
import triton
import triton.language as tl


@triton.jit
def _merge(n_a, mean_a, m2_a, n_b, mean_b, m2_b):
    n = n_a + n_b
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_b / n)
    m2 = m2_a + m2_b + delta * delta * (n_a * n_b / n)
    return n, mean, m2


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * stride_xm
    n = 0.0
    mean = 0.0
    m2 = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        cnt = tl.minimum(N - start, BLOCK_N).to(tl.float32)
        c_mean = tl.sum(x, axis=0) / cnt
        d = tl.where(mask, x - c_mean, 0.0)
        n, mean, m2 = _merge(n, mean, m2, cnt, c_mean, tl.sum(d * d, axis=0))
    rstd = 1.0 / tl.sqrt_rn(m2 / N + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_om + cols, ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty),
                 mask=mask)
