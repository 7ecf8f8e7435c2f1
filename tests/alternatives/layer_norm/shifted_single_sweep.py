"""Layer norm whose statistics come from one sweep over the row: sums of x - x[0] and of its square (the shift
by the row's first element keeps E[d^2] - E[d]^2 from cancelling when the mean is large), with tl.range loops."""
import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    shift = tl.load(x_row).to(tl.float32)
    s1 = tl.zeros([BLOCK_N], dtype=tl.float32)
    s2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - shift, 0.0)
        s1 += d
        s2 += d * d
    mean_d = tl.sum(s1, axis=0) / N
    var = tl.maximum(tl.sum(s2, axis=0) / N - mean_d * mean_d, 0.0)
    mean = shift + mean_d
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in tl.range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + row * stride_om + cols, y, mask=mask)


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    x = 1000 + torch.randn(8, 4096, device=DEVICE)
    w, b = torch.randn(4096, device=DEVICE), torch.randn(4096, device=DEVICE)
    y = torch.empty_like(x)
    layer_norm_kernel[(8,)](x, w, b, y, 4096, x.stride(0), y.stride(0), 1e-5, BLOCK_N=1024)
    print((y - torch.nn.functional.layer_norm(x, (4096,), w, b)).abs().max().item())
