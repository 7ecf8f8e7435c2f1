"""Layer norm whose loops take UNROLL blocks per trip, unrolled with tl.static_range (UNROLL a module-level
tl.constexpr), with the IEEE-rounded tl.sqrt_rn and tl.div_rn for the standard deviation."""
import triton
import triton.language as tl

UNROLL = tl.constexpr(2)


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid * stride_xm
    y_row = out_ptr + pid * stride_om
    lanes = tl.arange(0, BLOCK_N)
    STEP: tl.constexpr = UNROLL * BLOCK_N

    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for base in range(0, N, STEP):
        for u in tl.static_range(UNROLL):
            idx = base + u * BLOCK_N + lanes
            acc += tl.load(x_row + idx, mask=idx < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N

    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for base in range(0, N, STEP):
        for u in tl.static_range(UNROLL):
            idx = base + u * BLOCK_N + lanes
            x = tl.load(x_row + idx, mask=idx < N, other=0.0).to(tl.float32)
            x = tl.where(idx < N, x - mean, 0.0)
            acc += x * x
    var = tl.sum(acc, axis=0) / N
    rstd = tl.div_rn(1.0, tl.sqrt_rn(var + eps))

    for base in range(0, N, STEP):
        for u in tl.static_range(UNROLL):
            idx = base + u * BLOCK_N + lanes
            mask = idx < N
            x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + idx, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + idx, ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)
