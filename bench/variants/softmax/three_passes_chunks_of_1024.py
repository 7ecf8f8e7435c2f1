"""Three passes over x in chunks of 1024 columns (max, sum, normalise) instead of one load of the whole row: x is read
three times, again from the L2 where the rows of the programs running at once fit in it, from DRAM where not."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4)], key=["N"])
@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    # Pass 1: the row max.
    m = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
    # Pass 2: the sum of exp(x - max), reading the row again.
    s = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        s += tl.sum(tl.exp(x - m), axis=0)
    # Pass 3: normalise and store, reading the row a third time.
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        softmax = tl.exp(x - m) / s
        tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=cols < N)
