"""Online softmax with a @triton.heuristics that adds EVEN_N (N a multiple of BLOCK_N) as the kernel's last
parameter: when it holds, loads and stores drop their masks."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0})
@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    m = -float("inf")
    d = 0.0
    for start in range(0, N, BLOCK_N):
        if EVEN_N:
            x = tl.load(x_row + start + offs)
        else:
            x = tl.load(x_row + start + offs, mask=start + offs < N, other=-float("inf"))
        x = x.to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    for start in range(0, N, BLOCK_N):
        if EVEN_N:
            x = tl.load(x_row + start + offs).to(tl.float32)
            tl.store(o_row + start + offs, tl.exp(x - m) / d)
        else:
            mask = start + offs < N
            x = tl.load(x_row + start + offs, mask=mask, other=-float("inf")).to(tl.float32)
            tl.store(o_row + start + offs, tl.exp(x - m) / d, mask=mask)


def softmax(x, BLOCK_N=1024):
    out = torch.empty_like(x)
    online_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out
