"""Matmul with the older tutorial's grouped ordering (`pid % group_size`) on the linearised 2-D grid, GROUP_SIZE_M =
tl.constexpr(2**3), and each BLOCK_K tile fed to tl.dot as 16-wide slices unrolled by tl.static_range, the slice
count coming from a @triton.constexpr_function."""
import triton
import triton.language as tl

GROUP_SIZE_M = tl.constexpr(2**3)
SLICE_K = tl.constexpr(16)


@triton.constexpr_function
def num_slices(block_k, slice_k):
    assert block_k % slice_k == 0, "BLOCK_K must be a multiple of the slice width"
    return block_k // slice_k


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    num_pid_m = tl.num_programs(0)
    num_pid_n = tl.num_programs(1)
    pid = tl.program_id(0) * num_pid_n + tl.program_id(1)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rs = tl.arange(0, SLICE_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        for s in tl.static_range(num_slices(BLOCK_K, SLICE_K)):
            ks = k0 + s * SLICE_K + rs
            a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                        mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee")
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
