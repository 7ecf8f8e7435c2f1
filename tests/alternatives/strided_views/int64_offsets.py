"""Row and column indices promoted to int64 before they meet the strides (`rows.to(tl.int64) * stride_m`),
the usual guard against int32 overflow in large or widely strided views."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offsets = rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(x_ptr + offsets, x + 1, mask=mask)
