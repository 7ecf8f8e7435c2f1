"""Softmax backward autotuned over num_warps with a @triton.heuristics flag SINGLE_BLOCK (extra last parameter):
rows that fit in BLOCK_N stay in registers, longer rows take a tl.range loop over blocks."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=nw) for nw in [2, 4, 8]], key=["N"])
@triton.heuristics({"SINGLE_BLOCK": lambda args: args["N"] <= args["BLOCK_N"]})
@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_m, BLOCK_N: tl.constexpr, SINGLE_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    y_ptr += row * stride_m
    dy_ptr += row * stride_m
    dx_ptr += row * stride_m
    cols = tl.arange(0, BLOCK_N)
    if SINGLE_BLOCK:
        mask = cols < N
        y = tl.load(y_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dx = y * (dy - tl.sum(y * dy, axis=0))
        tl.store(dx_ptr + cols, dx, mask=mask)
    else:
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for off in tl.range(0, N, BLOCK_N):
            mask = off + cols < N
            y = tl.load(y_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            acc += y * dy
        s = tl.sum(acc, axis=0)
        for off in tl.range(0, N, BLOCK_N):
            mask = off + cols < N
            y = tl.load(y_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + off + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(dx_ptr + off + cols, y * (dy - s), mask=mask)
