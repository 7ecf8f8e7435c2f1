"""Performance-minded style: `@triton.jit(do_not_specialize=...)`, an early `return` for programs past the
end, tl.multiple_of / tl.max_contiguous hints on the offsets and streaming eviction policies."""
import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["n_elements"])
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    block_start = pid * BLOCK_SIZE
    if block_start >= n_elements:
        return
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    offsets = tl.max_contiguous(tl.multiple_of(offsets, BLOCK_SIZE), BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, eviction_policy="evict_first")
    y = tl.load(y_ptr + offsets, mask=mask, eviction_policy="evict_first")
    tl.store(out_ptr + offsets, x + y, mask=mask, cache_modifier=".cs")


def add(x: torch.Tensor, y: torch.Tensor, BLOCK_SIZE: int = 4096, num_warps: int = 8) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return out
