"""Flash attention as a persistent loop over (batch, query tile) work items: linear id from both program axes,
stride tl.num_programs(0) * tl.num_programs(1); natural tl.math.exp; keys past N masked with tl.where."""
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    n_m = tl.cdiv(N, BLOCK_M)
    total = n_m * tl.num_programs(1)
    step = tl.num_programs(0) * tl.num_programs(1)
    d = tl.arange(0, HEAD_DIM)
    for item in tl.range(tl.program_id(1) * tl.num_programs(0) + tl.program_id(0), total, step):
        z = item // n_m
        rows = (item % n_m) * BLOCK_M + tl.arange(0, BLOCK_M)
        base = z * stride_z
        q = tl.load(q_ptr + base + rows[:, None] * stride_n + d[None, :], mask=rows[:, None] < N, other=0.0)
        m = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
        for s in range(0, N, BLOCK_N):
            cols = s + tl.arange(0, BLOCK_N)
            kv = base + cols[:, None] * stride_n + d[None, :]
            k = tl.load(k_ptr + kv, mask=cols[:, None] < N, other=0.0)
            v = tl.load(v_ptr + kv, mask=cols[:, None] < N, other=0.0)
            sc = tl.dot(q, tl.trans(k)) * sm_scale
            sc = tl.where(cols[None, :] < N, sc, float("-inf"))
            mn = tl.maximum(m, tl.max(sc, axis=1))
            p = tl.math.exp(sc - mn[:, None])
            corr = tl.math.exp(m - mn)
            l = l * corr + tl.sum(p, axis=1)
            acc = acc * corr[:, None] + tl.dot(p.to(v.dtype), v)
            m = mn
        tl.store(o_ptr + base + rows[:, None] * stride_n + d[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
                 mask=rows[:, None] < N)
