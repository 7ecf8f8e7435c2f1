"""Causal attention as the classic three-pass (safe) softmax, without online rescaling: one loop body over the
visible key tiles, run three times by tl.static_range(3): pass 0 finds each row's max score, pass 1 the sum of
exp(score - max), pass 2 accumulates the normalised weights times V. Tiles above the diagonal are never loaded."""
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                            HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    base = tl.program_id(1) * stride_z
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, N)
    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for phase in tl.static_range(3):
        for start in range(0, hi, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            kv = base + offs_n[:, None] * stride_n + offs_d[None, :]
            k = tl.load(k_ptr + kv, mask=offs_n[:, None] < N, other=0.0)
            s = tl.dot(q, tl.trans(k)) * sm_scale
            s = tl.where((offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] < N), s, float("-inf"))
            if phase == 0:
                row_max = tl.maximum(row_max, tl.max(s, axis=1))
            elif phase == 1:
                row_sum += tl.sum(tl.exp(s - row_max[:, None]), axis=1)
            else:
                p = tl.exp(s - row_max[:, None]) / row_sum[:, None]
                v = tl.load(v_ptr + kv, mask=offs_n[:, None] < N, other=0.0)
                acc = tl.dot(p.to(v.dtype), v, acc)
    tl.store(o_ptr + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N)
