"""Each chunk sorted in pairs (tl.sort on the chunk reshaped to two columns) before it is added to a block of
partial sums: the order the elements are added in changes, the sum does not. (Sorting whole chunks is as right,
and ten times slower in Triton's own interpreter, whose sort is a bitonic network of Python loops.)"""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
        pairs = tl.sort(tl.reshape(x.to(tl.float32), (BLOCK_N // 2, 2)))  # each pair in order
        total += tl.reshape(pairs, (BLOCK_N,))  # a different pairing, the same sum
    tl.store(out_ptr + row, tl.sum(total, axis=0).to(out_ptr.dtype.element_ty))
