"""Row sum whose accumulator dtype is picked at compile time by a @triton.constexpr_function (float32 for
half-precision inputs), with a @triton.jit block-sum helper and `import torch, math` on one line."""
import torch, math
import triton
import triton.language as tl


@triton.constexpr_function
def accumulator_dtype(dtype):
    return tl.float32 if dtype.primitive_bitwidth < 32 else dtype


@triton.jit
def _masked_block(row_ptr, start, N, stride_n, BLOCK_N: tl.constexpr, dtype: tl.constexpr):
    cols = start + tl.arange(0, BLOCK_N)
    return tl.load(row_ptr + cols * stride_n, mask=cols < N, other=0.0).to(dtype)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    acc_ty: tl.constexpr = accumulator_dtype(x_ptr.dtype.element_ty)
    row = tl.program_id(0)
    row_ptr = x_ptr + row * stride_m
    acc = tl.zeros([BLOCK_N], dtype=acc_ty)
    for start in range(0, N, BLOCK_N):
        acc += _masked_block(row_ptr, start, N, stride_n, BLOCK_N, acc_ty)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def row_sum(x, block_n=None):
    M, N = x.shape
    block_n = block_n or min(4096, triton.next_power_of_2(N))
    out = torch.empty(M, dtype=torch.float32, device=x.device)
    row_sum_kernel[(M,)](x, out, N, x.stride(0), x.stride(1), BLOCK_N=block_n)
    return out


if __name__ == "__main__":
    x = torch.randn(16, 10_000, device="cuda", dtype=torch.float16)
    err = (row_sum(x) - x.double().sum(1)).abs().max().item()
    assert err < 1e-2 * math.sqrt(x.shape[1]), err
    print("max error", err)
