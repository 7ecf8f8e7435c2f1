"""Names imported directly: `from triton import jit` with `@jit`, `from triton.language import constexpr`,
upper-case pointer names and the element type taken from the loaded value (x.dtype) for the cast."""
import torch
import triton
import triton.language as tl
from triton import jit
from triton.language import constexpr


@jit
def add_kernel(X, Y, Z, N, BLOCK: constexpr):
    pid = tl.program_id(0)
    rng = pid * BLOCK + tl.arange(0, BLOCK)
    msk = rng < N
    x = tl.load(X + rng, mask=msk, other=0)
    y = tl.load(Y + rng, mask=msk, other=0)
    z = (x + y).to(x.dtype)
    tl.store(Z + rng, z, mask=msk)


def triton_add(x, y):
    z = torch.empty_like(x)
    N = x.numel()
    BLOCK = triton.next_power_of_2(min(N, 1024))
    add_kernel[(triton.cdiv(N, BLOCK),)](x, y, z, N, BLOCK=BLOCK)
    return z
