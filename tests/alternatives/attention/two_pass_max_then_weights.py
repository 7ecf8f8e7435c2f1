"""Two-pass attention instead of an online rescaled accumulator: a first sweep over the key tiles finds each row's
max and exp-sum, a second sweep accumulates the already-normalised probabilities times V; `@triton.heuristics`
appends EVEN_M and EVEN_N so that whole tiles are read without masks."""
import math

import torch
import triton
import triton.language as tl

INV_LN2 = tl.constexpr(1.4426950408889634)


@triton.heuristics({
    "EVEN_M": lambda args: args["n_tokens"] % args["BLOCK_M"] == 0,
    "EVEN_N": lambda args: args["n_tokens"] % args["BLOCK_N"] == 0,
})
@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, out_ptr, n_tokens, stride_seq_batch, stride_token, scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     EVEN_M: tl.constexpr, EVEN_N: tl.constexpr):
    q_start = tl.program_id(0) * BLOCK_M
    batch_off = tl.program_id(1).to(tl.int64) * stride_seq_batch
    rows = q_start + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    keys = tl.arange(0, BLOCK_N)

    q_ptrs = q_ptr + batch_off + rows[:, None] * stride_token + dims[None, :]
    if EVEN_M:
        q = tl.load(q_ptrs)
    else:
        q = tl.load(q_ptrs, mask=rows[:, None] < n_tokens, other=0.0)
    log2_scale = scale * INV_LN2

    # Pass 1: the row statistics.
    row_max = tl.full([BLOCK_M], -float("inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    for kv_start in range(0, n_tokens, BLOCK_N):
        k_ptrs = k_ptr + batch_off + (kv_start + keys)[:, None] * stride_token + dims[None, :]
        if EVEN_N:
            k = tl.load(k_ptrs)
        else:
            k = tl.load(k_ptrs, mask=(kv_start + keys)[:, None] < n_tokens, other=0.0)
        s = tl.dot(q, tl.trans(k)) * log2_scale
        if not EVEN_N:
            s = tl.where((kv_start + keys)[None, :] < n_tokens, s, -float("inf"))
        new_max = tl.maximum(row_max, tl.max(s, axis=1))
        row_sum = row_sum * tl.exp2(row_max - new_max) + tl.sum(tl.exp2(s - new_max[:, None]), axis=1)
        row_max = new_max

    # Pass 2: the weights are final, so they go straight into the output.
    inv_sum = 1.0 / row_sum
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for kv_start in range(0, n_tokens, BLOCK_N):
        kv_offs = batch_off + (kv_start + keys)[:, None] * stride_token + dims[None, :]
        if EVEN_N:
            k = tl.load(k_ptr + kv_offs)
            v = tl.load(v_ptr + kv_offs)
        else:
            k = tl.load(k_ptr + kv_offs, mask=(kv_start + keys)[:, None] < n_tokens, other=0.0)
            v = tl.load(v_ptr + kv_offs, mask=(kv_start + keys)[:, None] < n_tokens, other=0.0)
        s = tl.dot(q, tl.trans(k)) * log2_scale
        if not EVEN_N:
            s = tl.where((kv_start + keys)[None, :] < n_tokens, s, -float("inf"))
        p = tl.exp2(s - row_max[:, None]) * inv_sum[:, None]
        acc += tl.dot(p.to(v.dtype), v)

    o_ptrs = out_ptr + batch_off + rows[:, None] * stride_token + dims[None, :]
    if EVEN_M:
        tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty))
    else:
        tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=rows[:, None] < n_tokens)


def two_pass_attention(q, k, v, block_m=64, block_n=64):
    batch, n_tokens, head_dim = q.shape
    out = torch.empty_like(q)
    grid = (triton.cdiv(n_tokens, block_m), batch)
    attention_kernel[grid](q, k, v, out, n_tokens, q.stride(0), q.stride(1), 1.0 / math.sqrt(head_dim),
                           HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
    return out


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    for n in (256, 300):
        q, k, v = (torch.randn(2, n, 64, device=DEVICE, dtype=torch.float16) for _ in range(3))
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        print(n, (two_pass_attention(q, k, v) - ref).abs().max().item())
