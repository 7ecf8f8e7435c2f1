"""Small kernels the unit tests launch directly."""
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < n), mask=offsets < n)


@triton.jit
def unmasked_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets))


@triton.jit
def far_pointer_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets + (1 << 28)))


@triton.jit
def atomic_past_end_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.atomic_add(dst_ptr + offsets + n, tl.load(src_ptr + offsets, mask=offsets < n), mask=offsets < n)


@triton.jit
def _double(x):
    return x * 2


@triton.jit
def helpers_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    # uses @jit helpers of triton.language (tl.zeros, tl.sum, tl.cdiv) and one of its own (_double)
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(src_ptr + offsets, mask=mask, other=0.0) + tl.zeros([BLOCK], dtype=tl.float32)
    total = tl.sum(x, axis=0) * 0 + tl.cdiv(n, n)
    tl.store(dst_ptr + offsets, _double(x) * total, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])
@triton.jit
def autotuned_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256, "CHUNK": 64}), triton.Config({"BLOCK_SIZE": 128, "CHUNK": 128})],
                 key=["n_elements"])
@triton.heuristics({"CHUNKS": lambda args: triton.cdiv(args["BLOCK_SIZE"], args["CHUNK"])})
@triton.jit
def chunked_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, CHUNK: tl.constexpr,
                       CHUNKS: tl.constexpr):
    """Adds its block in CHUNKS pieces of CHUNK, CHUNKS computed by a heuristic from the tuned constants."""
    for piece in tl.static_range(CHUNKS):
        within = piece * CHUNK + tl.arange(0, CHUNK)
        offsets = tl.program_id(0) * BLOCK_SIZE + within
        mask = (within < BLOCK_SIZE) & (offsets < n_elements)
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)


@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def heuristic_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def add_one_kernel(x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    pointers = x_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(pointers, tl.load(pointers, mask=mask) + 1, mask=mask)


@triton.jit
def printing_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    print(offsets)
    print(mask)
    print(src_ptr + offsets)
    tl.device_print("loaded", tl.load(src_ptr + offsets, mask=mask, other=-1.0))
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def tile_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    columns = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (columns[None, :] < N)
    offsets = rows[:, None] * N + columns[None, :]
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


# Combine functions of tl.reduce, as kernels write their own.
@triton.jit
def add_combine(a, b):
    return a + b


@triton.jit
def online_softmax_combine(max_a, sum_a, max_b, sum_b):
    largest = tl.maximum(max_a, max_b)
    return largest, sum_a * tl.exp(max_a - largest) + sum_b * tl.exp(max_b - largest)


@triton.jit
def first_nonzero_combine(a, b):  # associative, not commutative: the order of the elements matters
    return tl.where(a != 0, a, b)


@triton.jit
def branching_max_combine(a, b):  # an `if` on its arguments: it takes one element at a time only
    if a > b:
        return a
    return b


@triton.jit
def descriptor_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr, EXTRA: tl.constexpr):
    """A tensor descriptor's load, given a shape EXTRA elements longer than its tensor."""
    start = tl.program_id(0) * BLOCK
    src = tl.make_tensor_descriptor(src_ptr, shape=[n + EXTRA], strides=[1], block_shape=[BLOCK])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    dst.store([start], src.load([start]))


@triton.jit
def block_pointer_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    """A block pointer's load without boundary_check (Triton before 3.9 has block pointers)."""
    start = tl.program_id(0) * BLOCK
    src = tl.make_block_ptr(src_ptr, shape=(n,), strides=(1,), offsets=(start,), block_shape=(BLOCK,), order=(0,))
    dst = tl.make_block_ptr(dst_ptr, shape=(n,), strides=(1,), offsets=(start,), block_shape=(BLOCK,), order=(0,))
    tl.store(dst, tl.load(tl.advance(src, (0,))), boundary_check=(0,))


@triton.jit
def split_pointers_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    """Pointers joined into pairs and split again (tl.join, tl.split), the second of each pair loaded unmasked."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    firsts, seconds = tl.split(tl.join(src_ptr + offsets, src_ptr + offsets + 1))
    tl.store(dst_ptr + offsets, tl.load(seconds) - tl.load(firsts, mask=offsets < n), mask=offsets < n)


@triton.jit
def halving_combine(a, b):  # not associative: a reduction with it is not the mean it looks like
    return (a + b) * 0.5


@triton.jit
def paired_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):  # two float32 a lane, through int64 pointers
    pairs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    source = (src_ptr + 2 * pairs).to(tl.pointer_type(tl.int64))
    target = (dst_ptr + 2 * pairs).to(tl.pointer_type(tl.int64))
    tl.store(target, tl.load(source, mask=2 * pairs < n), mask=2 * pairs < n)  # the last pair may reach past n


@triton.jit
def padded_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):  # dst holds a whole block: the padding shows
    offsets = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < n))


@triton.jit
def float32_dot_kernel(a_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, a))


@triton.jit
def loads_its_block_twice_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    first = tl.load(src_ptr + offsets, mask=offsets < n)
    again = tl.load(src_ptr + offsets, mask=offsets < n)  # the same elements again (a second sweep)
    broadcast = tl.load(src_ptr + offsets * 0)  # element 0 on every lane
    skipped = tl.load(src_ptr + offsets + BLOCK, mask=offsets < 0, other=0.0)  # every lane masked off
    looped = tl.zeros([BLOCK], tl.float32)
    for _ in range(3):  # the second iteration repeats the first (a second sweep), the third loads what it has again
        looped += tl.load(src_ptr + offsets, mask=offsets < n)
    tl.store(dst_ptr + offsets, first + again + broadcast + skipped + looped, mask=offsets < n)


@triton.jit
def sweeps_its_tiles_kernel(src_ptr, dst_ptr, SWEEPS: tl.constexpr, LAST_TILE: tl.constexpr, BLOCK: tl.constexpr):
    """One program sweeps the 4 tiles of src SWEEPS times with one load; the sweeps after the first clamp their
    tiles at LAST_TILE."""
    offsets = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for sweep in tl.static_range(SWEEPS):
        for tile in range(4):
            if sweep > 0:
                tile = tl.minimum(tile, LAST_TILE)
            total += tl.load(src_ptr + tile * BLOCK + offsets)
    tl.store(dst_ptr + offsets, total)


@triton.jit
def sweeps_by_program_kernel(src_ptr, dst_ptr, ALIKE: tl.constexpr, BLOCK: tl.constexpr):
    """Each program sweeps the 4 tiles of src with one load: three times each (ALIKE), or two more times the
    higher its id."""
    offsets = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    sweeps = 3 if ALIKE else 2 + 2 * tl.program_id(0)
    for sweep in range(sweeps):
        for tile in range(4):
            total += tl.load(src_ptr + tile * BLOCK + offsets)
    tl.store(dst_ptr + tl.program_id(0) * BLOCK + offsets, total)


@triton.jit
def overlapping_tiles_kernel(dst_ptr, n, SAME: tl.constexpr, BLOCK: tl.constexpr):
    """The last tile shifted back to end at n, over its neighbour: the same values there, or each program's id."""
    start = tl.minimum(tl.program_id(0) * BLOCK, n - BLOCK)
    offsets = start + tl.arange(0, BLOCK)
    value = offsets.to(tl.float32) if SAME else tl.zeros([BLOCK], tl.float32) + tl.program_id(0)
    tl.store(dst_ptr + offsets, value)


@triton.jit
def product_rounding_error_kernel(x_ptr, fused_ptr, libdevice_ptr, BLOCK: tl.constexpr, LIBDEVICE: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    tl.store(fused_ptr + offsets, tl.fma(x, x, -(x * x)))
    if LIBDEVICE:  # float32 and float64 only
        tl.store(libdevice_ptr + offsets, tl.extra.libdevice.fma(x, x, -(x * x)))


@triton.jit
def to_integer_kernel(x_ptr, n_ptr, signed_ptr, quotient_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(signed_ptr + offsets, tl.load(x_ptr + offsets).to(tl.int32))
    n = tl.load(n_ptr + offsets)
    tl.store(quotient_ptr + offsets, 7 // n)
