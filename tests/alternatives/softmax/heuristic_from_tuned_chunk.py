"""Fused softmax walking its row block in CHUNK-wide pieces: CHUNK is tuned by @triton.autotune and the number of
chunks, NUM_CHUNKS = BLOCK_N // CHUNK, is computed from it by @triton.heuristics (applied below the autotuner, so
the heuristic sees the configuration's CHUNK, as in Triton's own kernels that derive EVEN_K from a tuned BLOCK_K)."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"CHUNK": 128}, num_warps=4), triton.Config({"CHUNK": 256}, num_warps=8)],
                 key=["N"])
@triton.heuristics({"NUM_CHUNKS": lambda args: max(1, args["BLOCK_N"] // args["CHUNK"])})
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
