"""Row sum that sizes itself for the GPU as Triton's fused-softmax tutorial reads it: the driver's device properties
(registers and SMs) in a @triton.heuristics, and tuning configurations only for a CUDA target. The heuristic's
block is a power of two, whatever the GPU says, and every row is walked with a mask."""
import triton
import triton.language as tl
from triton.runtime import driver


def is_cuda():
    return driver.active.get_current_target().backend == "cuda"


def block_for_the_registers(args):
    properties = driver.active.utils.get_device_properties(driver.active.get_current_device())
    # Two programs an SM, four warps each: the registers each lane may spend on its part of a block.
    per_lane = properties["max_num_regs"] // (2 * 4 * properties["warpSize"])
    return min(triton.next_power_of_2(args["N"]), 16 * triton.next_power_of_2(per_lane))


@triton.autotune(configs=[triton.Config({}, num_warps=4)] if is_cuda() else [triton.Config({}, num_warps=8)],
                 key=["N"])
@triton.heuristics({"BLOCK_N": block_for_the_registers})
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        partial += tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(partial, axis=0))
