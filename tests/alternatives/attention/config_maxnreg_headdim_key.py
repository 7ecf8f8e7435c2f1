"""Flash attention autotuned over warps/stages with a register cap (triton.Config(maxnreg=...)), keyed on HEAD_DIM;
the scores get the key-padding mask as an additive bias row computed once per tile, base-2 exponentials."""
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=4, num_stages=2, maxnreg=168),
                          triton.Config({}, num_warps=8, num_stages=3, maxnreg=128)], key=["HEAD_DIM"])
@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, stride_z, stride_n, sm_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dh = tl.arange(0, HEAD_DIM)
    qo = z * stride_z + rows[:, None] * stride_n + dh[None, :]
    q = tl.load(q_ptr + qo, mask=rows[:, None] < N, other=0.0)
    c = sm_scale * 1.4426950408889634
    m = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for n0 in range(0, N, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        kvo = z * stride_z + keys[:, None] * stride_n + dh[None, :]
        k = tl.load(k_ptr + kvo, mask=keys[:, None] < N, other=0.0)
        v = tl.load(v_ptr + kvo, mask=keys[:, None] < N, other=0.0)
        bias = tl.where(keys < N, 0.0, -float("inf"))
        s = tl.dot(q, tl.trans(k)) * c + bias[None, :]
        mn = tl.maximum(m, tl.max(s, 1))
        p = tl.exp2(s - mn[:, None])
        al = tl.exp2(m - mn)
        l = l * al + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * al[:, None])
        m = mn
    tl.store(o_ptr + qo, (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N)
