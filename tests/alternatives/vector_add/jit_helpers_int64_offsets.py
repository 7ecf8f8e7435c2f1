"""Small @triton.jit helpers (block offsets, masked load) called from the kernel, with offsets computed in
int64 so that vectors of more than 2**31 elements would still be addressed correctly."""
import torch
import triton
import triton.language as tl


@triton.jit
def _block_offsets(pid, BLOCK: tl.constexpr):
    start = pid.to(tl.int64) * BLOCK
    return start + tl.arange(0, BLOCK).to(tl.int64)


@triton.jit
def _masked_load(ptr, offsets, n):
    return tl.load(ptr + offsets, mask=offsets < n, other=0.0)


@triton.jit
def _masked_store(ptr, offsets, n, value):
    tl.store(ptr + offsets, value, mask=offsets < n)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = _block_offsets(tl.program_id(0), BLOCK_SIZE)
    x = _masked_load(x_ptr, offsets, n_elements)
    y = _masked_load(y_ptr, offsets, n_elements)
    _masked_store(out_ptr, offsets, n_elements, x + y)


def add(x: torch.Tensor, y: torch.Tensor, block_size: int = 1024) -> torch.Tensor:
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), block_size),)](x, y, out, x.numel(), BLOCK_SIZE=block_size)
    return out
