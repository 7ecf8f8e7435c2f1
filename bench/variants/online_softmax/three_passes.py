"""Three passes over the row (max, then sum, then normalise) where the online softmax needs two: x is read three
times, and at N=32768 the 128 KB rows of the programs running at once overflow the L2, so re-reads go to DRAM."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4)], key=["N"])
@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
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
    # Pass 3: normalise and store, a third read of the row.
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        softmax = tl.exp(x - m) / s
        tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=cols < N)
