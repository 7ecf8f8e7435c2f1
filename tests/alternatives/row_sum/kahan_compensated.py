"""Row sum with Kahan compensated summation per lane: each lane keeps a running sum and the low-order bits
it lost, in float32 whatever the input dtype."""
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    row_ptr = x_ptr + row * stride_m
    total = tl.zeros([BLOCK_N], dtype=tl.float32)
    comp = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        idx = start + cols
        x = tl.load(row_ptr + idx * stride_n, mask=idx < N, other=0.0).to(tl.float32)
        y = x - comp
        t = total + y
        comp = (t - total) - y
        total = t
    result = tl.sum(total, axis=0) - tl.sum(comp, axis=0)
    tl.store(out_ptr + row, result)


def kahan_row_sum(x, BLOCK_N=256):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), BLOCK_N)
    return out


if __name__ == "__main__":
    x = torch.rand(8, 1 << 20, device="cuda", dtype=torch.float16)
    print((kahan_row_sum(x) - x.double().sum(1)).abs().max().item())
