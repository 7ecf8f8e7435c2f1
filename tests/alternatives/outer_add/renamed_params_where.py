"""Parameters renamed (a_ptr, b_ptr, c_ptr, n_rows, n_cols, BM, BN; matched by position) and the padding
lanes of both vectors zeroed with tl.where instead of `other=`."""
import torch
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(a_ptr, b_ptr, c_ptr, n_rows, n_cols, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    a = tl.load(a_ptr + rm, mask=rm < n_rows)
    b = tl.load(b_ptr + rn, mask=rn < n_cols)
    a = tl.where(rm < n_rows, a, 0.0)
    b = tl.where(rn < n_cols, b, 0.0)
    c = a[:, None] + b[None, :]
    c_ptrs = c_ptr + rm[:, None] * n_cols + rn[None, :]
    tl.store(c_ptrs, c, mask=(rm[:, None] < n_rows) & (rn[None, :] < n_cols))


def outer_add(a: torch.Tensor, b: torch.Tensor, BM: int = 32, BN: int = 128) -> torch.Tensor:
    c = torch.empty((a.numel(), b.numel()), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(a.numel(), BM), triton.cdiv(b.numel(), BN))
    outer_add_kernel[grid](a, b, c, a.numel(), b.numel(), BM=BM, BN=BN)
    return c


if __name__ == "__main__":
    a, b = torch.randn(37), torch.randn(50)
    torch.testing.assert_close(outer_add(a, b, 16, 32), a[:, None] + b[None, :])
