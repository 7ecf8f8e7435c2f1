"""Causal attention in two sweeps over the visible key tiles, as a two-pass softmax is written: the first finds
each row's max and exp-sum, the second adds the already-normalised weights times V. Each visible key tile is
loaded twice by its program (once a sweep), never a tile above the diagonal; `tl.cdiv` bounds the sweeps."""
import torch
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, n_ctx, stride_b, stride_t, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    base = tl.program_id(1) * stride_b
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], mask=offs_m[:, None] < n_ctx, other=0.0)
    # The last key any row of this tile sees is its last row: the sweeps stop at the tile holding it.
    last_key = tl.minimum((pid_m + 1) * BLOCK_M, n_ctx)
    n_tiles = tl.cdiv(last_key, BLOCK_N)

    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    for j in range(0, n_tiles):
        offs_n = j * BLOCK_N + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=offs_n[:, None] < n_ctx,
                    other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where((offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] < n_ctx), s, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(s, axis=1))
        row_sum = row_sum * tl.exp(row_max - new_max) + tl.sum(tl.exp(s - new_max[:, None]), axis=1)
        row_max = new_max

    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for j in range(0, n_tiles):
        offs_n = j * BLOCK_N + tl.arange(0, BLOCK_N)
        kv = base + offs_n[:, None] * stride_t + offs_d[None, :]
        k = tl.load(k_ptr + kv, mask=offs_n[:, None] < n_ctx, other=0.0)
        v = tl.load(v_ptr + kv, mask=offs_n[:, None] < n_ctx, other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where((offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] < n_ctx), s, float("-inf"))
        p = tl.exp(s - row_max[:, None]) / row_sum[:, None]
        acc += tl.dot(p.to(v.dtype), v)

    tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < n_ctx)


def causal_attention(q, k, v, block_m=64, block_n=32):
    batch, n_ctx, head_dim = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(n_ctx, block_m), batch)
    causal_attention_kernel[grid](q, k, v, o, n_ctx, q.stride(0), q.stride(1), head_dim ** -0.5,
                                  HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
    return o
