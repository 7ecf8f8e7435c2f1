"""The kernel written as a plain def and made one with `row_sum_kernel = triton.jit(_row_sum)`, accumulating with
`+=` and stepping its pointers with `+=` as any kernel does."""
import triton
import triton.language as tl


def _row_sum(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    pointers = x_ptr + tl.program_id(0) * stride_m + cols * stride_n
    total = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        total += tl.load(pointers, mask=start + cols < N, other=0.0).to(tl.float32)
        pointers += BLOCK_N * stride_n
    tl.store(out_ptr + tl.program_id(0), tl.sum(total, axis=0))


row_sum_kernel = triton.jit(_row_sum)
