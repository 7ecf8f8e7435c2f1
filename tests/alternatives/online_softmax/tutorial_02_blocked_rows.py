"""Triton's tutorial 02 (fused softmax, persistent version) adapted to rows longer than a block: the
persistent tl.range loop over rows is kept (start/step from tl.program_id / tl.num_programs), and the body
becomes a max pass, a sum pass and a write pass over BLOCK_SIZE column blocks, computed in float32."""
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def online_softmax_kernel(input_ptr, output_ptr, n_cols, input_row_stride, output_row_stride,
                          BLOCK_SIZE: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    n_rows = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=2):
        # The stride represents how much we need to increase the pointer to advance 1 row
        row_start_ptr = input_ptr + row_idx * input_row_stride
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        # The row does not fit in a block: find its maximum block by block
        row_max = tl.full([BLOCK_SIZE], -float('inf'), tl.float32)
        for col_start in range(0, n_cols, BLOCK_SIZE):
            mask = col_start + col_offsets < n_cols
            row = tl.load(row_start_ptr + col_start + col_offsets, mask=mask, other=-float('inf'))
            row_max = tl.maximum(row_max, row.to(tl.float32))
        max_value = tl.max(row_max, axis=0)
        # then the denominator
        denominator = tl.zeros([BLOCK_SIZE], tl.float32)
        for col_start in range(0, n_cols, BLOCK_SIZE):
            mask = col_start + col_offsets < n_cols
            row = tl.load(row_start_ptr + col_start + col_offsets, mask=mask, other=-float('inf'))
            denominator += tl.exp(row.to(tl.float32) - max_value)
        denominator_sum = tl.sum(denominator, axis=0)
        # Write back output to DRAM
        for col_start in range(0, n_cols, BLOCK_SIZE):
            mask = col_start + col_offsets < n_cols
            row = tl.load(row_start_ptr + col_start + col_offsets, mask=mask, other=-float('inf'))
            softmax_output = tl.exp(row.to(tl.float32) - max_value) / denominator_sum
            tl.store(output_row_start_ptr + col_start + col_offsets, softmax_output, mask=mask)


def softmax(x, BLOCK_SIZE=1024):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    online_softmax_kernel[(n_rows, 1, 1)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK_SIZE, num_warps=8)
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1823, 7810, device=DEVICE)
    y_triton = softmax(x)
    y_torch = torch.softmax(x, axis=1)
    assert torch.allclose(y_triton, y_torch), (y_triton, y_torch)
