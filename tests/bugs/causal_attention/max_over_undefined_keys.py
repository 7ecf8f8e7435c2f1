"""The keys of the partial last tile are loaded without other=, and the running max taken over future keys and
keys past the end before the causal mask: NaN here (tl.max passes over it), 0 on a GPU, where 0 wins the max
of scores far below zero.

expect: undefined_lanes
"""
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _attend(q, k_ptr, v_ptr, base, m, l, acc, rows, dims, start, end, N, stride_n, scale,
            BLOCK_N: tl.constexpr, ON_DIAGONAL: tl.constexpr):
    """Online softmax over the key tiles [start, end): masks only where tiles cross the diagonal."""
    for tile in range(start, end, BLOCK_N):
        keys = tile + tl.arange(0, BLOCK_N)
        kv_offsets = base + keys[:, None] * stride_n + dims[None, :]
        if ON_DIAGONAL:
            k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N)
            v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N, other=0.0)
        else:
            k = tl.load(k_ptr + kv_offsets)
            v = tl.load(v_ptr + kv_offsets)
        scores = tl.dot(q, tl.trans(k))
        m_new = tl.maximum(m, tl.max(scores, axis=1) * scale)
        p = tl.exp2(scores * scale - m_new[:, None])
        if ON_DIAGONAL:
            # Query i attends to key j when j <= i (the diagonal included), and only to keys that exist.
            visible = (keys[None, :] <= rows[:, None]) & (keys[None, :] < N)
            p = tl.where(visible, p, 0.0)
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m = m_new
    return m, l, acc


# Tiles, warps and stages for the GPU stage; the CPU grader uses each case's own tiles.
@triton.autotune(configs=[triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=3),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=4),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2)],
                 key=["N", "HEAD_DIM"])
@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(1)
    block = tl.program_id(0)
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    base = z * stride_z
    q = tl.load(q_ptr + base + rows[:, None] * stride_n + dims[None, :], mask=rows[:, None] < N, other=0.0)
    scale = sm_scale * LOG2E
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # Key tiles entirely below this block's first query need no mask (they end before it, so before N);
    # the tiles crossing the diagonal do; the tiles after the block's last query are masked for every row:
    # they are never loaded.
    below = (block * BLOCK_M) // BLOCK_N * BLOCK_N
    end = tl.minimum((block + 1) * BLOCK_M, N)
    m, l, acc = _attend(q, k_ptr, v_ptr, base, m, l, acc, rows, dims, 0, below, N, stride_n, scale, BLOCK_N, False)
    m, l, acc = _attend(q, k_ptr, v_ptr, base, m, l, acc, rows, dims, below, end, N, stride_n, scale, BLOCK_N, True)
    out = acc / l[:, None]
    tl.store(o_ptr + base + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N)
