"""Softmax of long rows in three passes (max, sum of exponentials, write), each walking its pointers forward
with `ptrs += BLOCK_N`, with per-lane partial maxima and sums reduced once after each pass."""
import torch
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)

    ptrs = x_ptr + row * stride_xm + offs
    m_part = tl.full([BLOCK_N], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        x = tl.load(ptrs, mask=start + offs < N, other=float("-inf"))
        m_part = tl.maximum(m_part, x.to(tl.float32))
        ptrs += BLOCK_N
    m = tl.max(m_part, axis=0)

    ptrs = x_ptr + row * stride_xm + offs
    s_part = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        x = tl.load(ptrs, mask=start + offs < N, other=float("-inf"))
        s_part += tl.exp(x.to(tl.float32) - m)
        ptrs += BLOCK_N
    inv = 1.0 / tl.sum(s_part, axis=0)

    in_ptrs = x_ptr + row * stride_xm + offs
    out_ptrs = out_ptr + row * stride_om + offs
    for start in range(0, N, BLOCK_N):
        mask = start + offs < N
        x = tl.load(in_ptrs, mask=mask, other=float("-inf"))
        y = tl.exp(x.to(tl.float32) - m) * inv
        tl.store(out_ptrs, y.to(out_ptr.dtype.element_ty), mask=mask)
        in_ptrs += BLOCK_N
        out_ptrs += BLOCK_N


def softmax(x: torch.Tensor, BLOCK_N: int = 1024) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty_like(x)
    online_softmax_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), BLOCK_N=BLOCK_N, num_warps=4)
    return out
