"""The 1-D block seen as a 2-D tile of ROWS x 16 elements (a 2-D program from the 1-D program id): offsets
built from a row and a column arange, masked by comparing the 2-D offsets with n_elements."""
import torch
import triton
import triton.language as tl

COLS = tl.constexpr(16)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    ROWS: tl.constexpr = BLOCK_SIZE // COLS
    r = tl.arange(0, ROWS)
    c = tl.arange(0, COLS)
    offs = tl.program_id(0) * BLOCK_SIZE + r[:, None] * COLS + c[None, :]
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, BLOCK_SIZE: int = 1024):
    assert BLOCK_SIZE % 16 == 0
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(out.numel(), BLOCK_SIZE),)](x, y, out, out.numel(), BLOCK_SIZE=BLOCK_SIZE)
    return out
