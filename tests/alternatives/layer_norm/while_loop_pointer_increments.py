"""Layer norm written with `while` loops that advance block pointers (`ptrs += BLOCK_N`) and count the elements
still to read, a two-pass variance, and a small host wrapper."""
import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    row_start = x_ptr + row * stride_xm + offs

    # mean
    ptrs = row_start
    remaining = N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    while remaining > 0:
        acc += tl.load(ptrs, mask=offs < remaining, other=0.0).to(tl.float32)
        ptrs += BLOCK_N
        remaining -= BLOCK_N
    mean = tl.sum(acc, axis=0) / N

    # variance around the mean
    ptrs = row_start
    remaining = N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    while remaining > 0:
        x = tl.load(ptrs, mask=offs < remaining, other=0.0).to(tl.float32)
        d = tl.where(offs < remaining, x - mean, 0.0)
        acc += d * d
        ptrs += BLOCK_N
        remaining -= BLOCK_N
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)

    # normalise, scale, shift
    x_ptrs = row_start
    w_ptrs = w_ptr + offs
    b_ptrs = b_ptr + offs
    o_ptrs = out_ptr + row * stride_om + offs
    remaining = N
    while remaining > 0:
        m = offs < remaining
        x = tl.load(x_ptrs, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptrs, mask=m, other=0.0).to(tl.float32)
        b = tl.load(b_ptrs, mask=m, other=0.0).to(tl.float32)
        tl.store(o_ptrs, ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty), mask=m)
        x_ptrs += BLOCK_N
        w_ptrs += BLOCK_N
        b_ptrs += BLOCK_N
        o_ptrs += BLOCK_N
        remaining -= BLOCK_N


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    assert x.ndim == 2 and x.stride(1) == 1
    out = torch.empty_like(x)
    M, N = x.shape
    layer_norm_kernel[(M,)](x, w, b, out, N, x.stride(0), out.stride(0), eps, BLOCK_N=min(triton.next_power_of_2(N), 4096))
    return out
