"""Online softmax, three passes; the reload wraps its offsets at N (as the matmul tutorial's `% M`) instead of
masking the load; only the store is masked. Lanes past N read elements they never use."""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    m = float("-inf")
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - m)
        s += tl.sum(e, axis=0)
        tl.store(o_row + cols, e.to(out_ptr.dtype.element_ty), mask=cols < N)
    inv = 1.0 / s
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        e = tl.load(o_row + cols % N).to(tl.float32)
        tl.store(o_row + cols, (e * inv).to(out_ptr.dtype.element_ty), mask=cols < N)
