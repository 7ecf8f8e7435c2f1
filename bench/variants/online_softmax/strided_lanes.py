"""Within each chunk, consecutive lanes take columns BLOCK_N // 32 apart (the chunk walked down the columns of a
32-row view): every warp load and store touches 32 sectors where 4 would do, and none is vectorised."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4)], key=["N"])
@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    lane = tl.arange(0, BLOCK_N)
    if BLOCK_N >= 32:
        # A permutation of the chunk: lane i takes column (i % 32) * (BLOCK_N // 32) + i // 32.
        lane = (lane % 32) * (BLOCK_N // 32) + lane // 32
    m = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    s = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + lane
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, BLOCK_N):
        cols = start + lane
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        softmax = tl.exp(x - m) / s
        tl.store(out_ptr + row * stride_om + cols, softmax.to(out_ptr.dtype.element_ty), mask=cols < N)
