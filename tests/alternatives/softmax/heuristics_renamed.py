"""Single-block softmax with its own parameter names and @triton.heuristics on those names: EVEN (the row
exactly fills the block, no mask needed) is added as the last parameter, and num_warps is chosen from BLOCK."""
import torch
import triton
import triton.language as tl


@triton.heuristics({
    "EVEN": lambda args: args["n_cols"] % args["BLOCK"] == 0,
    "num_warps": lambda args: 4 if args["BLOCK"] <= 2048 else 8,
})
@triton.jit
def softmax_kernel(X, Y, n_cols, sx, sy, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    i = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(X + i * sx + j)
    else:
        x = tl.load(X + i * sx + j, mask=j < n_cols, other=-float("inf"))
    x = x.to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    if EVEN:
        tl.store(Y + i * sy + j, y)
    else:
        tl.store(Y + i * sy + j, y, mask=j < n_cols)


def softmax(x):
    y = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return y
