"""Online softmax with @triton.jit(do_not_specialize=["N"]) (one compiled kernel for every row length), a
scalar running max/sum and the output divided with tl.fdiv(ieee_rounding=True)."""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["N"])
def online_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid * stride_xm
    o_row = out_ptr + pid * stride_om
    run_max = tl.full([], float("-inf"), tl.float32)
    run_sum = tl.full([], 0.0, tl.float32)
    for i in range(tl.cdiv(N, BLOCK_N)):
        c = i * BLOCK_N + tl.arange(0, BLOCK_N)
        v = tl.load(x_row + c, mask=c < N, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(v, 0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(v - new_max), 0)
        run_max = new_max
    for i in range(tl.cdiv(N, BLOCK_N)):
        c = i * BLOCK_N + tl.arange(0, BLOCK_N)
        v = tl.load(x_row + c, mask=c < N, other=float("-inf")).to(tl.float32)
        e = tl.exp(v - run_max)
        tl.store(o_row + c, tl.fdiv(e, tl.broadcast_to(run_sum, e.shape), ieee_rounding=True).to(o_row.dtype.element_ty),
                 mask=c < N)
