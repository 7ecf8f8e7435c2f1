"""Row sum whose loop is unrolled by hand: each iteration covers UNROLL blocks with tl.static_range, UNROLL
being a module-level tl.constexpr(2**2)."""
import torch
import triton
import triton.language as tl

UNROLL = tl.constexpr(2**2)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    row_ptr = x_ptr + pid * stride_m
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N * UNROLL):
        for u in tl.static_range(UNROLL):
            cols = start + u * BLOCK_N + offs
            acc += tl.load(row_ptr + cols * stride_n, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


if __name__ == "__main__":
    x = torch.randn(100, 3000, device="cuda")[:, ::3]
    out = torch.empty(100, device="cuda")
    row_sum_kernel[(100,)](x, out, x.shape[1], x.stride(0), x.stride(1), BLOCK_N=256)
    torch.testing.assert_close(out, x.sum(1))
