"""Matmul autotuned over a list comprehension of triton.Config (key M, N, K), parameters named A, B, C, tl.range
over the K tiles with K masks computed from the tile's start, and `acc += tl.dot(..., out_dtype=tl.float32,
allow_tf32=False)`."""
import torch
import triton
import triton.language as tl

configs = [
    triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=s, num_warps=w)
    for bm in (64, 128)
    for bn in (64, 128)
    for bk in (32, 64)
    for s, w in ((3, 4), (4, 8))
]


@triton.autotune(configs=configs, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    i = tl.program_id(0)
    j = tl.program_id(1)
    rows = i * BM + tl.arange(0, BM)
    cols = j * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in tl.range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(A + rows[:, None] * sam + ks[None, :] * sak, mask=(rows[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(B + ks[:, None] * sbk + cols[None, :] * sbn, mask=(ks[:, None] < K) & (cols[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b, out_dtype=tl.float32, allow_tf32=False)
    tl.store(C + rows[:, None] * scm + cols[None, :] * scn, acc.to(C.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c
