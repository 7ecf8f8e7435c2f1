"""Two-pass layer norm that keeps the whole row in registers when it fits in one block and loops over blocks
otherwise; parameters named after the tensors (X, W, B, Y, n_cols, ...) and tl.math.rsqrt for 1 / std."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(X, W, B, Y, n_cols, x_row_stride, y_row_stride, epsilon, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    X += pid * x_row_stride
    Y += pid * y_row_stride
    offs = tl.arange(0, BLOCK)
    if n_cols <= BLOCK:
        # the row fits: read it once, both statistics from registers
        m = offs < n_cols
        x = tl.load(X + offs, mask=m, other=0.0).to(tl.float32)
        mu = tl.sum(x, axis=0) / n_cols
        xc = tl.where(m, x - mu, 0.0)
        inv_std = tl.math.rsqrt(tl.sum(xc * xc, axis=0) / n_cols + epsilon)
        w = tl.load(W + offs, mask=m, other=0.0).to(tl.float32)
        b = tl.load(B + offs, mask=m, other=0.0).to(tl.float32)
        tl.store(Y + offs, (xc * inv_std * w + b).to(Y.dtype.element_ty), mask=m)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for k in range(0, n_cols, BLOCK):
            m = k + offs < n_cols
            acc += tl.load(X + k + offs, mask=m, other=0.0).to(tl.float32)
        mu = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for k in range(0, n_cols, BLOCK):
            m = k + offs < n_cols
            x = tl.load(X + k + offs, mask=m, other=0.0).to(tl.float32)
            xc = tl.where(m, x - mu, 0.0)
            acc += xc * xc
        inv_std = tl.math.rsqrt(tl.sum(acc, axis=0) / n_cols + epsilon)
        for k in range(0, n_cols, BLOCK):
            m = k + offs < n_cols
            x = tl.load(X + k + offs, mask=m, other=0.0).to(tl.float32)
            w = tl.load(W + k + offs, mask=m, other=0.0).to(tl.float32)
            b = tl.load(B + k + offs, mask=m, other=0.0).to(tl.float32)
            tl.store(Y + k + offs, ((x - mu) * inv_std * w + b).to(Y.dtype.element_ty), mask=m)
