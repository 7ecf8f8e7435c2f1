"""Within each chunk, consecutive lanes take columns BLOCK_N // 32 apart (the chunk walked down the columns of a
32-row view): every warp load of x, w and b and every store touches 32 sectors where 4 would do."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4)], key=["N"])
@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    lane = tl.arange(0, BLOCK_N)
    if BLOCK_N >= 32:
        # A permutation of the chunk: lane i takes column (i % 32) * (BLOCK_N // 32) + i // 32.
        lane = (lane % 32) * (BLOCK_N // 32) + lane // 32
    total = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + lane
        total += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    squares = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + lane
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        centered = tl.where(cols < N, x - mean, 0.0)
        squares += centered * centered
    rstd = 1 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + lane
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        out = (x - mean) * rstd * w + b
        tl.store(out_ptr + row * stride_om + cols, out.to(out_ptr.dtype.element_ty), mask=mask)
