"""The tuning configurations in a module-level list, each giving the kernel's own UNROLL alike."""
import triton
import triton.language as tl

configs = [triton.Config({"UNROLL": 2}, num_warps=4), triton.Config({"UNROLL": 2}, num_warps=8)]


@triton.autotune(configs=configs, key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, UNROLL: tl.constexpr):
    pid = tl.program_id(0)
    for u in tl.static_range(UNROLL):
        offs = (pid * UNROLL + u) * (BLOCK_SIZE // UNROLL) + tl.arange(0, BLOCK_SIZE // UNROLL)
        m = offs < n_elements
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
