"""A fused softmax whose @triton.heuristics sits above its @triton.autotune and counts chunks of the
configuration's CHUNK, with 256 where it is not given: Triton runs that heuristic before the autotuner gives the
configuration's constants, so it always counts chunks of 256, and the configuration with CHUNK=128 covers half of
each row.

expect: mismatch
"""
import torch
import triton
import triton.language as tl


@triton.heuristics({"NUM_CHUNKS": lambda args: max(1, args["BLOCK_N"] // (args["CHUNK"] if "CHUNK" in args else 256))})
@triton.autotune(configs=[triton.Config({"CHUNK": 256}, num_warps=8), triton.Config({"CHUNK": 128}, num_warps=4)],
                 key=["N"])
@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr, CHUNK: tl.constexpr,
                   NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    o_row = out_ptr + row * stride_om
    offs = tl.arange(0, CHUNK)
    m = tl.full([CHUNK], float("-inf"), tl.float32)
    for c in tl.static_range(NUM_CHUNKS):
        cols = c * CHUNK + offs
        m = tl.maximum(m, tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32))
    row_max = tl.max(m, axis=0)
    s = tl.zeros([CHUNK], tl.float32)
    for c in tl.static_range(NUM_CHUNKS):
        cols = c * CHUNK + offs
        s += tl.exp(tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32) - row_max)
    denom = tl.sum(s, axis=0)
    for c in tl.static_range(NUM_CHUNKS):
        cols = c * CHUNK + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        tl.store(o_row + cols, (tl.exp(x - row_max) / denom).to(out_ptr.dtype.element_ty), mask=cols < N)


def softmax(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), triton.next_power_of_2(N))
    return out
