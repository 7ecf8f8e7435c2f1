"""Layer norm with Welford's online algorithm: every lane keeps a running (mean, M2, count) over the row's blocks,
the lanes are merged with Chan's parallel combine through tl.reduce, and libdevice.rsqrt gives 1 / std."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    delta = mean_b - mean_a
    # lanes that never saw an element have n == 0: give them no weight instead of dividing by zero
    frac_b = n_b / tl.maximum(n, 1.0)
    return mean_a + delta * frac_b, m2_a + m2_b + delta * delta * n_a * frac_b, n


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om

    mean = tl.zeros([BLOCK_N], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    count = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        new_count = count + mask.to(tl.float32)
        delta = x - mean
        new_mean = mean + delta / tl.maximum(new_count, 1.0)
        m2 = tl.where(mask, m2 + delta * (x - new_mean), m2)
        mean = tl.where(mask, new_mean, mean)
        count = new_count

    mean, m2, count = tl.reduce((mean, m2, count), 0, welford_combine)
    rstd = libdevice.rsqrt(m2 / N + eps)

    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def layer_norm(x, weight, bias, eps=1e-5, block_n=1024):
    out = torch.empty_like(x)
    M, N = x.shape
    layer_norm_kernel[(M,)](x, weight, bias, out, N, x.stride(0), out.stride(0), eps, BLOCK_N=block_n)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 3000, device="cuda") * 0.1 + 50
    w = torch.randn(3000, device="cuda")
    b = torch.randn(3000, device="cuda")
    ref = torch.nn.functional.layer_norm(x, (3000,), w, b)
    torch.testing.assert_close(layer_norm(x, w, b), ref, atol=1e-3, rtol=1e-3)
    print("ok")
