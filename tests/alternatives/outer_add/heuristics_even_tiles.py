"""@triton.heuristics adds EVEN_M and EVEN_N constexpr parameters, so the tiles of a matrix that the blocks
divide exactly are loaded and stored without masks."""
import torch
import triton
import triton.language as tl


@triton.heuristics({
    "EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
    "EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0,
})
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     EVEN_M: tl.constexpr, EVEN_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    if EVEN_M:
        x = tl.load(x_ptr + rm)
    else:
        x = tl.load(x_ptr + rm, mask=rm < M, other=0.0)
    if EVEN_N:
        y = tl.load(y_ptr + rn)
    else:
        y = tl.load(y_ptr + rn, mask=rn < N, other=0.0)
    ptrs = out_ptr + rm[:, None] * N + rn[None, :]
    if EVEN_M and EVEN_N:
        tl.store(ptrs, x[:, None] + y[None, :])
    else:
        tl.store(ptrs, x[:, None] + y[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))


def outer_add(x, y, BLOCK_M=32, BLOCK_N=32):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    outer_add_kernel[grid](x, y, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


if __name__ == "__main__":
    for M, N in ((64, 64), (37, 50)):
        x, y = torch.randn(M), torch.randn(N)
        assert torch.allclose(outer_add(x, y), x[:, None] + y[None, :])
    print("ok")
