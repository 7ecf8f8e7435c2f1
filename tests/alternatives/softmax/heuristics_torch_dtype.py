"""Single-block softmax with a @triton.heuristics that looks at the input tensor's torch dtype: UPCAST (half
or bfloat16 input) makes the kernel compute in float32, float32 input is used as it is."""
import torch
import triton
import triton.language as tl


@triton.heuristics({"UPCAST": lambda args: args["x_ptr"].dtype in (torch.float16, torch.bfloat16)})
@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr, UPCAST: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=float("-inf"))
    if UPCAST:
        x = x.to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_om + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK_N=triton.next_power_of_2(x.shape[1]))
    return out


if __name__ == "__main__":
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(100, 1000, device="cuda", dtype=dtype)
        torch.testing.assert_close(softmax(x), torch.softmax(x.float(), dim=-1).to(dtype))
