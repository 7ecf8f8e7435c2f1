"""Short parameter names matched by position (a, b, c, n, BLOCK); the lanes past the end are zeroed with
tl.where(mask, x, 0.0) instead of `other=`."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = idx < n
    # zero the lanes past the end ourselves instead of relying on `other=`
    va = tl.where(inb, tl.load(a + idx, mask=inb), 0.0)
    vb = tl.where(inb, tl.load(b + idx, mask=inb), 0.0)
    tl.store(c + idx, va + vb, mask=inb)


def vadd(a: torch.Tensor, b: torch.Tensor, block: int = 256) -> torch.Tensor:
    assert a.shape == b.shape and a.is_contiguous() and b.is_contiguous()
    c = torch.empty_like(a)
    n = c.numel()
    add_kernel[(triton.cdiv(n, block),)](a, b, c, n, BLOCK=block)
    return c


if __name__ == "__main__":
    a = torch.randn(1000, device=DEVICE)
    b = torch.randn(1000, device=DEVICE)
    torch.testing.assert_close(vadd(a, b), a + b)
    print("ok")
