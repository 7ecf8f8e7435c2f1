"""Softmax backward that chooses its own block: @triton.heuristics sets BLOCK_N to the next power of two of N
(whatever the launch passed, as Triton's Heuristics.run overwrites the keyword) and num_warps from it, the way
a library kernel sizes a one-row-per-program reduction."""
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK_N": lambda args: max(16, triton.next_power_of_2(args["N"])),
    "num_warps": lambda args: 8 if args["N"] >= 2048 else (4 if args["N"] >= 512 else 2),
})
@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    dx = y * dy - y * tl.sum(y * dy, axis=0)
    tl.store(dx_ptr + row * stride_m + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
