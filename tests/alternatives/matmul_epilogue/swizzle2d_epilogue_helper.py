"""Fused matmul epilogue with tl.swizzle2d grouping of the 2-D program ids and the epilogue (bias broadcast over rows,
then leaky ReLU) in its own @triton.jit helper applied to the float32 accumulator."""
import triton
import triton.language as tl

GROUP = tl.constexpr(8)


@triton.jit
def bias_leaky_relu(acc, bias_ptr, cols, N, slope: tl.constexpr):
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    out = acc + bias[None, :]
    return tl.where(out >= 0, out, out * slope)


@triton.jit
def matmul_bias_leaky_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_K: tl.constexpr):
    pid_m, pid_n = tl.swizzle2d(tl.program_id(0), tl.program_id(1), tl.num_programs(0), tl.num_programs(1), GROUP)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K)):
        rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < rem), other=0.0)
        b = tl.load(b_ptrs, mask=(ks[:, None] < rem) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    out = bias_leaky_relu(acc, bias_ptr, cols, N, 0.01)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, out.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
