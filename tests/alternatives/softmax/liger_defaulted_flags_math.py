"""Liger-Kernel flavour: the row's offsets as int64, the masked load with other=-inf, tl.math.exp and
tl.math.div_rn, and extra constexpr flags with defaults (USE_EXP2, a compile-time choice between the two
exponentials through a helper taking a constexpr)."""
import triton
import triton.language as tl


@triton.jit
def _exp(x, USE_EXP2: tl.constexpr):
    if USE_EXP2:
        return tl.math.exp2(x * 1.4426950408889634)
    else:
        return tl.math.exp(x)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr,
                   USE_EXP2: tl.constexpr = False, ACC_DTYPE: tl.constexpr = tl.float32):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < N
    x = tl.load(x_ptr + row * stride_xm + offs, mask=mask, other=float("-inf"), eviction_policy="evict_first")
    x = x.to(ACC_DTYPE)
    e = _exp(x - tl.max(x, axis=0), USE_EXP2)
    d = tl.sum(e, axis=0)
    y = tl.math.div_rn(e, tl.broadcast_to(d, (BLOCK_N,)))
    tl.store(out_ptr + row * stride_om + offs, y.to(out_ptr.dtype.element_ty), mask=mask)
