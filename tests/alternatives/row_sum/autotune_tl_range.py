"""Row sum autotuned over num_warps with a list comprehension of configs (keyed on N), a tl.range loop with
software pipelining, and a module-level accumulator dtype (ACC_DTYPE = tl.float32)."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()

ACC_DTYPE = tl.float32


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in [2, 4, 8]], key=["N"])
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_m
    acc = tl.zeros([BLOCK_N], dtype=ACC_DTYPE)
    for off in tl.range(0, N, BLOCK_N, num_stages=3):
        cols = off + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols * stride_n, mask=cols < N, other=0.0)
        acc += x.to(ACC_DTYPE)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sum(x, block_n=1024):
    M, N = x.shape
    out = torch.empty((M,), dtype=torch.float32, device=x.device)
    row_sum_kernel[(M,)](x, out, N, x.stride(0), x.stride(1), BLOCK_N=block_n)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(1823, 781, device=DEVICE, dtype=dtype)
        assert torch.allclose(row_sum(x), x.float().sum(dim=1), atol=1e-3, rtol=1e-4)
    print("ok")
