"""Outer add as a rank-2 matrix product: [x, 1, 0, ...] @ [[1, ...], [y], 0, ...] = x[:, None] + y[None, :],
padded to a K of 16 so that tl.dot takes it; float32 in IEEE precision so nothing is rounded to TF32
(each output is x * 1 + 1 * y plus zeros: exact before the final cast)."""
import triton
import triton.language as tl

K_PAD = tl.constexpr(16)


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    k = tl.arange(0, K_PAD)
    x = tl.load(x_ptr + rm, mask=rm < M, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    a = tl.where(k[None, :] == 0, x[:, None], tl.where(k[None, :] == 1, 1.0, 0.0))     # [BLOCK_M, K_PAD]
    b = tl.where(k[:, None] == 0, 1.0, tl.where(k[:, None] == 1, y[None, :], 0.0))     # [K_PAD, BLOCK_N]
    out = tl.dot(a, b, input_precision="ieee")
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], out.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))
