"""The 2-D grid linearised into one program id, then split back into (pid_m, pid_n) with // and %, the way
grouped-ordering matmul kernels derive their tile coordinates."""
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    num_pid_n = tl.num_programs(1)
    pid = tl.program_id(0) * num_pid_n + tl.program_id(1)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    x = tl.load(x_ptr + offs_m, mask=mask_m, other=0.0)
    y = tl.load(y_ptr + offs_n, mask=mask_n, other=0.0)
    out = x[:, None] + y[None, :]
    offs = offs_m[:, None] * N + offs_n[None, :]
    tl.store(out_ptr + offs, out, mask=mask_m[:, None] & mask_n[None, :])
