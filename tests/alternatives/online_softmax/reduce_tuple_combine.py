"""Online softmax whose per-block (max, sum) pair is merged with tl.reduce over a tuple and a @triton.jit
combine function that rescales the two partial sums to their common max, as a parallel scan would."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_combine(m_a, s_a, m_b, s_b):
    m = tl.maximum(m_a, m_b)
    # a side whose max is -inf holds no element yet: its sum contributes nothing
    s = tl.where(m_a == m, s_a, s_a * tl.exp(m_a - m)) + tl.where(m_b == m, s_b, s_b * tl.exp(m_b - m))
    return m, s


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * stride_xm
    out_row = out_ptr + row * stride_om
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        # each lane's own element as a (max, sum) pair: (x, 1), or (-inf, 0) past the end of the row
        m, s = _softmax_combine(m, s, x, mask.to(tl.float32))
    row_max, row_sum = tl.reduce((m, s), 0, _softmax_combine)
    for start in range(0, N, BLOCK_N):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(out_row + start + cols, tl.exp(x - row_max) / row_sum, mask=mask)


def softmax(x):
    out = torch.empty_like(x)
    online_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK_N=512)
    return out
