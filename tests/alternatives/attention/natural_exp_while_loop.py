"""Flash attention with the natural exponential (`tl.exp`, scale applied to the scores), an additive -inf bias row
for the keys past the end, a `while` loop that walks K^T and V with pointer increments, K^T read directly as a
(HEAD_DIM, BLOCK_N) tile."""
import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_base, k_base, v_base, out_base, n_ctx, batch_stride, row_stride, softmax_scale,
                     HEAD: tl.constexpr, TILE_Q: tl.constexpr, TILE_K: tl.constexpr):
    tile = tl.program_id(0)
    batch = tl.program_id(1)
    rows = tile * TILE_Q + tl.arange(0, TILE_Q)
    cols = tl.arange(0, TILE_K)
    feats = tl.arange(0, HEAD)
    offset = batch * batch_stride

    q = tl.load(q_base + offset + rows[:, None] * row_stride + feats[None, :], mask=rows[:, None] < n_ctx, other=0.0)

    # K^T tile: feature along the first axis, key along the second.
    kt_ptrs = k_base + offset + feats[:, None] + cols[None, :] * row_stride
    v_ptrs = v_base + offset + cols[:, None] * row_stride + feats[None, :]

    row_max = tl.zeros([TILE_Q], dtype=tl.float32) - float("inf")
    row_sum = tl.zeros([TILE_Q], dtype=tl.float32)
    acc = tl.zeros([TILE_Q, HEAD], dtype=tl.float32)

    start = 0
    while start < n_ctx:
        valid = start + cols < n_ctx
        kt = tl.load(kt_ptrs, mask=valid[None, :], other=0.0)
        v = tl.load(v_ptrs, mask=valid[:, None], other=0.0)

        bias = tl.where(valid, 0.0, float("-inf"))
        scores = tl.dot(q, kt) * softmax_scale + bias[None, :]

        new_max = tl.maximum(row_max, tl.max(scores, 1))
        correction = tl.exp(row_max - new_max)
        probs = tl.exp(scores - new_max[:, None])
        row_sum = row_sum * correction + tl.sum(probs, 1)
        acc = acc * correction[:, None]
        acc += tl.dot(probs.to(v.dtype), v)
        row_max = new_max

        kt_ptrs += TILE_K * row_stride
        v_ptrs += TILE_K * row_stride
        start += TILE_K

    out = acc / row_sum[:, None]
    tl.store(out_base + offset + rows[:, None] * row_stride + feats[None, :], out.to(out_base.dtype.element_ty),
             mask=rows[:, None] < n_ctx)


def attention(q, k, v, tile_q=64, tile_k=32):
    z, n, d = q.shape
    out = torch.empty_like(q)
    attention_kernel[(triton.cdiv(n, tile_q), z)](q, k, v, out, n, q.stride(0), q.stride(1), d ** -0.5,
                                                  d, tile_q, tile_k)
    return out


if __name__ == "__main__":
    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    q, k, v = torch.randn(3, 2, 257, 32, device=DEVICE, dtype=torch.float16).unbind(0)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(attention(q, k, v), ref, atol=2e-3, rtol=2e-3)
    print("ok")
