"""Softmax backward kernel (one row per program, one block per row) used from a torch.autograd.Function whose
forward is torch.softmax; the gradient is computed as y * dy - y * <y, dy> with tl.fma."""
import torch

import triton
import triton.language as tl


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offsets = row * stride_m + tl.arange(0, BLOCK_N)
    mask = tl.arange(0, BLOCK_N) < N
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=0)
    dx = tl.fma(y, dy, -(y * dot))
    tl.store(dx_ptr + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)


class Softmax(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, dim=-1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        y2 = y.reshape(-1, y.shape[-1])
        dy2 = dy.reshape(-1, dy.shape[-1]).contiguous()
        dx = torch.empty_like(y2)
        M, N = y2.shape
        BLOCK_N = triton.next_power_of_2(N)
        num_warps = 4 if BLOCK_N <= 2048 else 8 if BLOCK_N <= 8192 else 16
        softmax_backward_kernel[(M,)](y2, dy2, dx, N, y2.stride(0), BLOCK_N=BLOCK_N, num_warps=num_warps)
        return dx.view_as(y)


softmax = Softmax.apply


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    x = torch.randn(128, 781, device=DEVICE, requires_grad=True)
    dy = torch.randn(128, 781, device=DEVICE)
    (ours,) = torch.autograd.grad(softmax(x), x, dy)
    (ref,) = torch.autograd.grad(torch.softmax(x, dim=-1), x, dy)
    torch.testing.assert_close(ours, ref)
    print("ok")
