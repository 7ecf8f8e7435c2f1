"""Layer norm autotuned over num_warps (key N) with a @triton.heuristics flag ROW_FITS, an extra last parameter,
that picks at compile time between one block held in registers and a loop over blocks."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 2, 4, 8, 16)], key=["N"])
@triton.heuristics({"ROW_FITS": lambda args: args["N"] <= args["BLOCK_N"]})
@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr,
                      ROW_FITS: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride_xm
    out_ptr += row * stride_om
    cols = tl.arange(0, BLOCK_N)
    if ROW_FITS:
        mask = cols < N
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
        rstd = 1 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(out_ptr + cols, xc * rstd * w + b, mask=mask)
    else:
        s = tl.zeros([BLOCK_N], dtype=tl.float32)
        for off in range(0, N, BLOCK_N):
            s += tl.load(x_ptr + off + cols, mask=off + cols < N, other=0.0).to(tl.float32)
        mean = tl.sum(s, axis=0) / N
        s = tl.zeros([BLOCK_N], dtype=tl.float32)
        for off in range(0, N, BLOCK_N):
            x = tl.load(x_ptr + off + cols, mask=off + cols < N, other=0.0).to(tl.float32)
            xc = tl.where(off + cols < N, x - mean, 0.0)
            s += xc * xc
        rstd = 1 / tl.sqrt(tl.sum(s, axis=0) / N + eps)
        for off in range(0, N, BLOCK_N):
            mask = off + cols < N
            x = tl.load(x_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + off + cols, mask=mask)
            b = tl.load(b_ptr + off + cols, mask=mask)
            tl.store(out_ptr + off + cols, (x - mean) * rstd * w + b, mask=mask)


def layer_norm(x, w, b, eps=1e-5):
    y = torch.empty_like(x)
    M, N = x.shape
    layer_norm_kernel[(M,)](x, w, b, y, N, x.stride(0), y.stride(0), eps, BLOCK_N=min(1024, triton.next_power_of_2(N)))
    return y


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    for n in (100, 1024, 5000):
        x = torch.randn(32, n, device=DEVICE, dtype=torch.float16)
        w = torch.rand(n, device=DEVICE, dtype=torch.float16)
        b = torch.rand(n, device=DEVICE, dtype=torch.float16)
        torch.testing.assert_close(layer_norm(x, w, b), torch.nn.functional.layer_norm(x, (n,), w, b), atol=1e-2, rtol=1e-2)
    print("ok")
