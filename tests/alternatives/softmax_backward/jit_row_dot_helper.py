"""Softmax backward with the row's <y, dy> in a @triton.jit helper that loops over blocks, `from triton import jit`,
and a module-level ACC = tl.float32 for the arithmetic."""
import torch
import triton
import triton.language as tl
from triton import jit

ACC = tl.float32


@jit
def row_dot(a_row, b_row, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=ACC)
    for k in range(tl.cdiv(n, BLOCK)):
        idx = k * BLOCK + tl.arange(0, BLOCK)
        a = tl.load(a_row + idx, mask=idx < n, other=0.0).to(ACC)
        b = tl.load(b_row + idx, mask=idx < n, other=0.0).to(ACC)
        acc += a * b
    return tl.sum(acc, axis=0)


@jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    y_row = y_ptr + row * stride_m
    dy_row = dy_ptr + row * stride_m
    dx_row = dx_ptr + row * stride_m
    s = row_dot(y_row, dy_row, N, BLOCK_N)
    for k in range(tl.cdiv(N, BLOCK_N)):
        idx = k * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = idx < N
        y = tl.load(y_row + idx, mask=mask, other=0.0).to(ACC)
        dy = tl.load(dy_row + idx, mask=mask, other=0.0).to(ACC)
        tl.store(dx_row + idx, (y * dy - y * s).to(dx_ptr.dtype.element_ty), mask=mask)


def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    assert y.shape == dy.shape and y.stride() == dy.stride() and y.stride(1) == 1
    dx = torch.empty_strided(y.shape, y.stride(), dtype=y.dtype, device=y.device)
    softmax_backward_kernel[(y.shape[0],)](y, dy, dx, y.shape[1], y.stride(0), BLOCK_N=1024)
    return dx
