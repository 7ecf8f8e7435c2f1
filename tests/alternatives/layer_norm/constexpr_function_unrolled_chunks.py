"""Layer norm where each loop step covers UNROLL blocks at once (a 2-D [UNROLL, BLOCK_N] tile), UNROLL chosen by
a triton.constexpr_function from the block size; a jit helper with a defaulted constexpr returns the row sum."""
import triton
import triton.language as tl


@triton.constexpr_function
def pick_unroll(block):
    return 4 if block <= 128 else 2


@triton.jit
def _tile(ptr, start, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr, OTHER: tl.constexpr = 0.0):
    cols = start + tl.arange(0, UNROLL)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :]
    return tl.load(ptr + cols, mask=cols < n, other=OTHER).to(tl.float32), cols


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    U: tl.constexpr = pick_unroll(BLOCK_N)
    STEP: tl.constexpr = U * BLOCK_N
    row = tl.program_id(0)
    xr = x_ptr + row * stride_xm
    orow = out_ptr + row * stride_om
    total = tl.zeros([U, BLOCK_N], tl.float32)
    for start in range(0, N, STEP):
        t, _ = _tile(xr, start, N, BLOCK_N, U)
        total += t
    mean = tl.sum(tl.sum(total, axis=1), axis=0) / N
    sq = tl.zeros([U, BLOCK_N], tl.float32)
    for start in range(0, N, STEP):
        t, cols = _tile(xr, start, N, BLOCK_N, U)
        d = tl.where(cols < N, t - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt_rn(tl.sum(tl.sum(sq, axis=1), axis=0) / N + eps)
    for start in range(0, N, STEP):
        t, cols = _tile(xr, start, N, BLOCK_N, U)
        w, _ = _tile(w_ptr, start, N, BLOCK_N, U)
        b, _ = _tile(b_ptr, start, N, BLOCK_N, U)
        tl.store(orow + cols, ((t - mean) * rstd * w + b).to(out_ptr.dtype.element_ty), mask=cols < N)
