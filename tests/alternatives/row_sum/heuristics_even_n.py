"""Row sum with a @triton.heuristics that adds a parameter: EVEN_N (N a multiple of BLOCK_N) drops the mask,
with 64-bit row offsets and a tl.range loop."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0})
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    base = x_ptr + row.to(tl.int64) * stride_m
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        cols = start + offs
        if EVEN_N:
            x = tl.load(base + cols * stride_n)
        else:
            x = tl.load(base + cols * stride_n, mask=cols < N, other=0.0)
        acc += x.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total)


def row_sum(x: torch.Tensor, BLOCK_N: int = 512) -> torch.Tensor:
    M, N = x.shape
    out = x.new_empty(M, dtype=torch.float32)
    row_sum_kernel[(M,)](x, out, N, *x.stride(), BLOCK_N=BLOCK_N)
    return out


if __name__ == "__main__":
    for n in (512, 4096, 1000):
        x = torch.randn(64, n, device="cuda")
        torch.testing.assert_close(row_sum(x), x.sum(1), atol=1e-3, rtol=1e-4)
    print("passed")
