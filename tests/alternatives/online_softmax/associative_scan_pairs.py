"""Online softmax whose per-block (max, sum) pair is merged with tl.associative_scan over a custom combine (the
last element of the scan is the block's total), then folded into the running pair the same way."""
import triton
import triton.language as tl


@triton.jit
def _merge(m_a, s_a, m_b, s_b):
    m = tl.maximum(m_a, m_b)
    safe = tl.where(m == float("-inf"), 0.0, m)
    return m, s_a * tl.exp(m_a - safe) + s_b * tl.exp(m_b - safe)


@triton.jit
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    src = x_ptr + row * stride_xm
    dst = out_ptr + row * stride_om
    run_m = tl.full([1], float("-inf"), tl.float32)
    run_s = tl.zeros([1], tl.float32)
    lane = tl.arange(0, BLOCK_N)
    for start in range(0, N, BLOCK_N):
        idx = start + lane
        x = tl.load(src + idx, mask=idx < N, other=float("-inf")).to(tl.float32)
        ones = tl.where(idx < N, 1.0, 0.0)
        pm, ps = tl.associative_scan((x, ones), 0, _merge)
        blk_m = tl.sum(tl.where(lane == BLOCK_N - 1, pm, 0.0), 0, keep_dims=True)
        blk_s = tl.sum(tl.where(lane == BLOCK_N - 1, ps, 0.0), 0, keep_dims=True)
        run_m, run_s = _merge(run_m, run_s, blk_m, blk_s)
    m = tl.sum(run_m, 0)
    s = tl.sum(run_s, 0)
    for start in range(0, N, BLOCK_N):
        idx = start + lane
        x = tl.load(src + idx, mask=idx < N, other=0.0).to(tl.float32)
        tl.store(dst + idx, (tl.exp(x - m) / s).to(dst.dtype.element_ty), mask=idx < N)
