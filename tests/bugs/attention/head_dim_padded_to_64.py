"""The head dimension is padded to a fixed 64 lanes, masked by HEAD_DIM: right for a head dimension up to 64, wrong
for the benchmark's 128, whose dimensions 64 to 127 are never read nor stored.

expect: unwritten_output
"""
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # exp(x) = exp2(x * log2(e))
DIM_LANES = tl.constexpr(64)  # the head dimension padded to 64 lanes


@triton.jit
def _attend(q, k_ptr, v_ptr, base, m, l, acc, dims, start, end, N, stride_n, scale,
            BLOCK_N: tl.constexpr, PARTIAL: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Online softmax over the key tiles [start, end): masks only for a tile that runs past the last key."""
    for tile in range(start, end, BLOCK_N):
        keys = tile + tl.arange(0, BLOCK_N)
        kv_offsets = base + keys[:, None] * stride_n + dims[None, :]
        kv_mask = (keys[:, None] < N) & (dims[None, :] < HEAD_DIM)
        k = tl.load(k_ptr + kv_offsets, mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=kv_mask, other=0.0)
        scores = tl.dot(q, tl.trans(k))
        if PARTIAL:
            # Keys past the end get -inf: their weight exp2(-inf) is exactly 0.
            scores = tl.where(keys[None, :] < N, scores, float("-inf"))
        # The scale (positive) goes into the max and the exponent, in log2 units: one multiply-add a score.
        m_new = tl.maximum(m, tl.max(scores, axis=1) * scale)
        p = tl.exp2(scores * scale - m_new[:, None])
        alpha = tl.exp2(m - m_new)  # rescales what was accumulated against the old max
        l = l * alpha + tl.sum(p, axis=1)
        # tl.dot adds into its third argument: the tensor cores accumulate in place.
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
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, DIM_LANES)
    base = z * stride_z
    q = tl.load(q_ptr + base + rows[:, None] * stride_n + dims[None, :], mask=(rows[:, None] < N) & (dims[None, :] < HEAD_DIM), other=0.0)
    scale = sm_scale * LOG2E
    # Running max m, running sum l and the unnormalised output acc, per query row, in float32.
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, DIM_LANES], tl.float32)
    # The whole key tiles without masks (on a GPU the masks cost more than they seem), then the partial
    # last tile, if there is one, with them.
    whole = N // BLOCK_N * BLOCK_N
    m, l, acc = _attend(q, k_ptr, v_ptr, base, m, l, acc, dims, 0, whole, N, stride_n, scale, BLOCK_N, False, HEAD_DIM)
    m, l, acc = _attend(q, k_ptr, v_ptr, base, m, l, acc, dims, whole, N, N, stride_n, scale, BLOCK_N, True, HEAD_DIM)
    out = acc / l[:, None]
    tl.store(o_ptr + base + rows[:, None] * stride_n + dims[None, :], out.to(o_ptr.dtype.element_ty),
             mask=(rows[:, None] < N) & (dims[None, :] < HEAD_DIM))
