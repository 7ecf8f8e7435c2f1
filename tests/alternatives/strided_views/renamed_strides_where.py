"""Everything renamed (X, n_rows, n_cols, stride_row, stride_col, TILE_R, TILE_C; matched by position);
the loaded tile is cleaned with tl.where before adding one."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(X, n_rows, n_cols, stride_row, stride_col, TILE_R: tl.constexpr, TILE_C: tl.constexpr):
    r = tl.program_id(0) * TILE_R + tl.arange(0, TILE_R)
    c = tl.program_id(1) * TILE_C + tl.arange(0, TILE_C)
    inside = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    ptrs = X + r[:, None] * stride_row + c[None, :] * stride_col
    tile = tl.where(inside, tl.load(ptrs, mask=inside), 0.0)
    tl.store(ptrs, tile + 1, mask=inside)


def add_one_(x: torch.Tensor, tile=(16, 16)) -> torch.Tensor:
    """x += 1 in place, for any 2-D view."""
    grid = (triton.cdiv(x.shape[0], tile[0]), triton.cdiv(x.shape[1], tile[1]))
    add_one_kernel[grid](x, x.shape[0], x.shape[1], x.stride(0), x.stride(1), TILE_R=tile[0], TILE_C=tile[1])
    return x


if __name__ == "__main__":
    base = torch.zeros(30, 40)
    add_one_(base.t())
    add_one_(base[:, ::3])
    print(base.sum())
