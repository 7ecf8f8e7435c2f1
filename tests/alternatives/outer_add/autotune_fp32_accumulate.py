"""@triton.autotune over (BLOCK_M, BLOCK_N, num_warps) keyed on M and N; the tile is built in float32
(ACC_DTYPE module constant, tl.zeros accumulator) and cast to out_ptr.dtype.element_ty on the store."""
import torch
import triton
import triton.language as tl

ACC_DTYPE = tl.float32


def get_configs():
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w)
        for bm, bn, w in [(16, 128, 4), (32, 128, 4), (64, 64, 4), (32, 256, 8), (64, 256, 8)]
    ]


@triton.autotune(configs=get_configs(), key=["M", "N"])
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs_m, mask=offs_m < M, other=0.0).to(ACC_DTYPE)
    y = tl.load(y_ptr + offs_n, mask=offs_n < N, other=0.0).to(ACC_DTYPE)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_DTYPE)
    acc += x[:, None]
    acc += y[None, :]
    out_ptrs = out_ptr + offs_m[:, None] * N + offs_n[None, :]
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def outer_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    M, N = x.numel(), y.numel()
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    outer_add_kernel[grid](x, y, out, M, N)
    return out
