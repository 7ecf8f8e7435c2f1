"""Online softmax autotuned the way tutorial 03 (matrix multiplication) picks its configurations: is_cuda() asks
the active driver for the backend and get_autotune_config() returns the CUDA or the HIP list; the kernel keeps a
running max and a rescaled running sum."""
import torch
import triton
import triton.language as tl


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def get_cuda_autotune_config():
    return [triton.Config({}, num_warps=w, num_stages=s) for w in [4, 8] for s in [2, 3]]


def get_hip_autotune_config():
    return [triton.Config({}, num_warps=w, num_stages=2) for w in [4, 8, 16]]


def get_autotune_config():
    if is_cuda():
        return get_cuda_autotune_config()
    else:
        return get_hip_autotune_config()


@triton.autotune(configs=get_autotune_config(), key=["N"])
@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om
    m_i = tl.full([], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_ij = tl.maximum(m_i, tl.max(x, axis=0))
        l_i = l_i * tl.exp(m_i - m_ij) + tl.sum(tl.exp(x - m_ij), axis=0)
        m_i = m_ij
    for start in tl.range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        tl.store(out_row + cols, (tl.exp(x - m_i) / l_i).to(out_ptr.dtype.element_ty), mask=cols < N)


def softmax(x: torch.Tensor, BLOCK_N: int = 1024) -> torch.Tensor:
    out = torch.empty_like(x)
    online_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
    return out
