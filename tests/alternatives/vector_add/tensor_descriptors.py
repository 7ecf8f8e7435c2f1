"""Tensor descriptors (tl.make_tensor_descriptor, Triton 3.6 and later, what replaced block pointers): every block
is loaded and stored through a descriptor that knows the tensor's shape, so the last block needs no mask."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0) * BLOCK_SIZE
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[n_elements], strides=[1], block_shape=[BLOCK_SIZE])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[n_elements], strides=[1], block_shape=[BLOCK_SIZE])
    out_desc = tl.make_tensor_descriptor(out_ptr, shape=[n_elements], strides=[1], block_shape=[BLOCK_SIZE])
    out_desc.store([start], x_desc.load([start]) + y_desc.load([start]))
