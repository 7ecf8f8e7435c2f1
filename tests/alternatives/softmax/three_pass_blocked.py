"""Softmax as three passes over the row in blocks (max pass, sum-of-exponentials pass, write pass), each pass
walking a pointer forward by BLOCK_N; it does not rely on the row fitting in one block."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)

    # pass 1: row max
    m = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    x_ptrs = x_ptr + row * stride_xm + offs
    for start in range(0, N, BLOCK_N):
        x = tl.load(x_ptrs, mask=start + offs < N, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
        x_ptrs += BLOCK_N
    row_max = tl.max(m, axis=0)

    # pass 2: sum of exp(x - max)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    x_ptrs = x_ptr + row * stride_xm + offs
    for start in range(0, N, BLOCK_N):
        x = tl.load(x_ptrs, mask=start + offs < N, other=float("-inf")).to(tl.float32)
        s += tl.exp(x - row_max)
        x_ptrs += BLOCK_N
    inv_sum = 1.0 / tl.sum(s, axis=0)

    # pass 3: normalise and write
    x_ptrs = x_ptr + row * stride_xm + offs
    o_ptrs = out_ptr + row * stride_om + offs
    for start in range(0, N, BLOCK_N):
        mask = start + offs < N
        x = tl.load(x_ptrs, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(o_ptrs, (tl.exp(x - row_max) * inv_sum).to(out_ptr.dtype.element_ty), mask=mask)
        x_ptrs += BLOCK_N
        o_ptrs += BLOCK_N


def softmax(x, BLOCK_N=1024):
    M, N = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out
