"""Layer norm that reads the row once for its statistics: each block's own mean and M2 (two-pass within the block,
in registers) are merged into running scalars with Chan et al.'s parallel update, over tl.cdiv(N, BLOCK_N) blocks."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, N, stride_xm, stride_om, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    cols = tl.arange(0, BLOCK_N)

    count = 0.0
    mean = 0.0
    m2 = 0.0
    for i in range(tl.cdiv(N, BLOCK_N)):
        offs = i * BLOCK_N + cols
        mask = offs < N
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        n_b = tl.minimum(N - i * BLOCK_N, BLOCK_N).to(tl.float32)
        mean_b = tl.sum(x, axis=0) / n_b
        d = tl.where(mask, x - mean_b, 0.0)
        m2_b = tl.sum(d * d, axis=0)
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total

    rstd = 1.0 / tl.sqrt(m2 / N + eps)
    for i in range(tl.cdiv(N, BLOCK_N)):
        offs = i * BLOCK_N + cols
        mask = offs < N
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_om + offs, ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty),
                 mask=mask)
