"""How fast would it be? The performance stage's estimate, made on the CPU from the counters the sandboxed worker
recorded (traffic.py) and the compile for sm_90, for a chosen GPU.

The model is a roofline with four ceilings, each from a counter the interpreter saw:
  memory      the bytes that must come from DRAM (each tensor once, at the read and write bandwidths; a row read
              again once the L2 no longer holds it; whole sectors read and written for a store that fills only
              part of each; registers spilled beyond what the L2 holds),
  requests    the 32-byte sectors every warp request asks of the L2 (an uncoalesced walk, a tensor read three
              times, a spilled tile), at the L2's bandwidth,
  latency     each round of loads in a program's loop costs a round trip for every wave of programs (only so
              many fit on an SM at once: registers, shared memory, warps), each reduction its exchange (across
              warps through shared memory with barriers, within a warp by shuffles), each program its start and end,
  compute     the tl.dot flops at the rate of their operands (tensor cores for float16, CUDA cores for a
              float32 dot in IEEE precision), then the exponentials at the special-function units' rate or the
              other arithmetic on the values (a softmax's scaling, tl.where, conversions) at the CUDA cores',
              whichever takes longer: the two run on different pipes, side by side.
A program alone on its SM (its registers or shared memory leave no room for a second) has no other program to
run while it waits for memory: its round trips and its arithmetic take turns, and the larger of the two
ceilings includes the smaller. A tl.dot whose tiles the compiler does not load ahead (a while loop, one
pipeline stage: compile_check.tiles_pipelined) waits for them in every iteration: moving them and multiplying
them take turns within each program, and only the other programs on its SM hide some of the smaller.
The estimate is the highest ceiling plus the launch. What would make the largest difference, in time, is said
in words the student can act on. The GPUs' figures are what the GPU stage measured where we have run it
(bench/results/), the datasheet otherwise.
"""
import math
import re
from dataclasses import asdict, dataclass, field

from .configs import NUM_WARPS, validate_configs
from .traffic import VECTOR_BYTES, launch_config


@dataclass(frozen=True)
class GPU:
    name: str
    sms: int
    clock_hz: float
    read_bandwidth: float  # bytes/s from DRAM, measured (a sum over a large tensor)
    write_bandwidth: float  # bytes/s to DRAM, measured (a fill)
    l2_bandwidth: float  # bytes/s between the SMs and the L2
    round_s: float  # a round of loads in a loop, every SM full of programs
    program_s: float  # what starting and retiring one program costs its SM (measured the same for 1, 4, 16 warps)
    float16_dot: float  # flops/s of a float16 matmul (torch.matmul, measured)
    tf32_dot: float
    float32_fma: float  # flops/s of a float32 tl.dot in IEEE precision (FMA on the CUDA cores)
    l2_bytes: int
    special_per_sm_clock: int  # exponentials per SM per clock (the special-function units)
    alu_per_sm_clock: int = 128  # float32 operations per SM per clock (its CUDA cores)
    reduction_warp_s: float = 0.08e-6  # a reduction within each warp (shuffles) in a loop, every SM full of programs
    reduction_block_s: float = 0.48e-6  # one across a program's warps (through shared memory, with barriers)
    registers_per_sm: int = 65536
    warps_per_sm: int = 64
    programs_per_sm: int = 32
    shared_per_sm: int = 233472
    compute_capability: int = 90  # what the kernel is compiled for to read its registers, spills and layouts
    warpgroup_mma: bool = True  # Hopper's wgmma, which a tl.dot of fewer than 4 warps or 64 rows cannot use
    source: str = ""


# The H100's bandwidths and matmul rate: bench/results/roofline-h100.json (the GPU stage, an H100 80GB HBM3).
# The H200's: bench/results/gpu_reference.md. The L2's bandwidth, a round's and a wave's cost: measured on the
# H100 (bench/performance_model.py constants, in bench/results/performance-model-h100.md), assumed the same on
# the others, as is the H100's float32 tl.dot rate on the H200 (the same chip), and its reductions' costs (measured
# on an H200 too: the same to within 5%). The L2's size: what the GPU reports (torch's L2_cache_size in those
# files: 50 MiB on the H100, 60 MiB on the H200). The rest: NVIDIA's datasheets (dense rates), scaled by the
# measured fraction of the float16 peak.
GPUS = {
    "H100": GPU("NVIDIA H100 SXM", 132, 1.98e9, 2.90e12, 3.20e12, 7.4e12, 0.23e-6, 0.08e-6, 736e12, 368e12, 43.5e12, 50 * 2 ** 20, 16,
                source="bandwidths and the float16 matmul rate measured by the GPU stage on an H100 80GB HBM3"),
    "H200": GPU("NVIDIA H200", 132, 1.98e9, 4.19e12, 4.19e12, 7.4e12, 0.23e-6, 0.08e-6, 717e12, 358e12, 43.5e12, 60 * 2 ** 20, 16,
                source="copy bandwidth and float16 matmul rate measured by the GPU stage on an H200"),
    "A100": GPU("NVIDIA A100 SXM 80GB", 108, 1.41e9, 1.85e12, 1.85e12, 4.5e12, 0.23e-6, 0.08e-6, 280e12, 140e12, 17.5e12, 40 * 2 ** 20, 16,
                alu_per_sm_clock=64, shared_per_sm=167936, compute_capability=80, warpgroup_mma=False,
                source="datasheet (2.04 TB/s, 312 TFLOP/s float16) at 90% of it"),
}
LAUNCH_S = 3e-6
SECTOR = 32
WARP = 32
FLOAT16_TYPES = ("fp16", "bf16", "fp8")
MMA_V2_SHARE = 0.6  # of the float16 rate, a tl.dot that cannot use the H100's warpgroup MMA (wgmma) reaches
CEILINGS = ("memory", "requests", "latency", "compute")
# Of the L2: data read again finds it all still there while what was moved meanwhile fits in L2_KEPT of it, none of
# it once that fills L2_GONE of it, the whole cache (replacement that is nearly least-recently-used: a stream as
# large as the cache evicts what a later pass needs). Chosen on the kernels of bench/results/performance-model-*.md
# among lower ends 0.05 to 0.3 and upper ends 0.5 to 1.2, on both GPUs (bench/results/performance-model-h100-misses.md).
L2_KEPT, L2_GONE = 0.1, 1.0
L1_BYTES = 64 * 1024  # a tensor this small, read by every program, is served by each SM's L1 after its first read


@dataclass
class Performance:
    gpu: str
    sizes: dict
    config: dict
    programs: int
    predicted_s: float
    roofline_s: float
    bound: str  # the highest ceiling: memory | requests | latency | compute
    ceilings: dict  # ceiling -> seconds
    occupancy: dict  # programs per SM and what limits them, registers, spills, shared memory
    tensors: list  # per tensor: bytes read and written (whole kernel), the least, times read
    accesses: list  # per load and store: line, tensor, sectors per request against the fewest
    dots: list
    advice: list = field(default_factory=list)
    reductions: list = field(default_factory=list)  # per reduction: line, shape, axis, times a program, warps spanned
    error: str = None
    # The tuning configurations the GPU stage's autotuner times at that size (those the kernel's pruner keeps there),
    # in the course's names (configs.validate_configs): it keeps the fastest. The estimate is of `config`, the first
    # of them unless another was chosen.
    tuning: list = field(default_factory=list)

    @property
    def fraction(self):
        return self.roofline_s / self.predicted_s if self.predicted_s else None

    def to_dict(self):
        return {**asdict(self), "fraction": self.fraction}


ABOVE_THE_ROOFLINE = 1.1  # how far past the roofline the model's own approximations may put an honest kernel
UNEVEN_STORES = 0.1  # how far from once the sampled programs may store each output element, scaled to the grid


def known_gpu(name):
    """`name` if the estimate knows that GPU (a key of GPUS); raises ValueError naming the ones it knows."""
    if name not in GPUS:
        raise ValueError(f"the performance estimate knows {', '.join(GPUS)}, not {name!r}")
    return name


def unavailable(puzzle, gpu, message):
    return Performance(GPUS[gpu].name, dict(puzzle.benchmark.sizes[0]), {}, 0, 0.0, 0.0, "", {}, {}, [], [], [],
                       error=message)


def estimate(puzzle, params, profile, gpu, chosen=None):
    """The Performance on `gpu` (a key of GPUS) of a kernel (its parameters `params`) from its checked profile
    (protocol.check_profile, made for that GPU's compute capability), made with the configuration `chosen` if the
    profile was (traffic.launch_config)."""
    spec = GPUS[gpu]
    sizes = dict(puzzle.benchmark.sizes[0])
    if "error" in profile:
        return unavailable(puzzle, gpu, f"the kernel could not be profiled at the benchmark size: {profile['error']}")
    # The configurations the kernel's pruner keeps at the benchmark's size, where it has one (worker._plan)
    configs = [profile["configs"][i] for i in profile["kept"]] if profile.get("kept") else profile["configs"]
    config = launch_config(puzzle, configs, params, chosen)
    from .compile_check import benchmark_launch
    tensors, _, grid = benchmark_launch(puzzle, config, sizes)
    programs = math.prod(grid)
    scale = programs / len(profile["programs"])  # the sampled programs stand for the whole grid
    resources = profile["resources"]
    if "error" in resources:
        return unavailable(puzzle, gpu, f"the GPU compiler rejects the benchmark's launch: {resources['error']}")
    counts = _counts(puzzle, tensors, profile, scale, sizes)
    for tensor in counts["tensors"]:
        # A passing kernel stores each element of an output once: the sampled programs' stores, scaled to the grid,
        # come to its size unless the programs do unequal work.
        stored = tensor["written_distinct"] / tensor["bytes"] if tensor["bytes"] else 1.0
        if tensor["role"] == "output" and abs(stored - 1) > UNEVEN_STORES:
            return unavailable(puzzle, gpu, (
                f"the programs sampled ({', '.join(map(str, map(tuple, profile['programs'])))} of {programs}) "
                f"store {stored:.2f} times {tensor['name']} between them, scaled to the grid: its programs do "
                "unequal work (a persistent kernel, say), which a few of them cannot stand for. `triton-course "
                "bench` measures it on a GPU."))
    occupancy = _occupancy(spec, resources, config)
    if not occupancy["programs_per_sm"]:
        return unavailable(puzzle, gpu, f"one program needs more {occupancy['limited_by']} than an SM of the "
                                        f"{spec.name} has")
    ceilings = _ceilings(spec, counts, occupancy, programs, resources, config)
    predicted = max(ceilings.values()) + LAUNCH_S
    roofline = _roofline(spec, puzzle, sizes, counts)
    if predicted * ABOVE_THE_ROOFLINE < roofline:
        return unavailable(puzzle, gpu, (
            f"the programs sampled would make it {roofline / predicted:.1f} times faster than any kernel can be "
            f"({_duration(roofline)} at least): they did less than their share of the work at the benchmark size. "
            "`triton-course bench` measures it on a GPU."))
    performance = Performance(spec.name, sizes, config, programs, predicted, roofline, max(ceilings, key=ceilings.get),
                              ceilings, occupancy, counts["tensors"], counts["accesses"], counts["dots"])
    performance.reductions = [{**r, "warps": warps_spanned(r, occupancy["num_warps"], counts)}
                              for r in counts["reductions"]]
    performance.advice = _advice(spec, counts, occupancy, programs, resources, config, ceilings, predicted)
    performance.tuning = validate_configs(puzzle, configs, params)[0]
    return performance


def _counts(puzzle, tensors, profile, scale, sizes):
    """Whole-kernel counts, from the sampled programs'."""
    roles = {t.name: t.role for t in puzzle.tensors}
    per_tensor = {name: {"name": name, "role": roles.get(name, "input"),
                         "bytes": tensor.numel() * tensor.element_size(), "read": 0.0, "written": 0.0,
                         "read_distinct": 0.0, "written_distinct": 0.0, "lines": set(), "store_sectors": 0.0}
                  for name, tensor in tensors.items()}
    accesses = []
    for site in profile["sites"]:
        if site["tensor"] not in per_tensor:
            continue
        entry = per_tensor[site["tensor"]]
        entry["read" if site["access"] == "load" else "written"] += site["bytes"] * scale
        if site["access"] != "load":
            entry["store_sectors"] += site["sectors"] * SECTOR * scale
        entry["lines"].add(site["line"])
        accesses.append({"line": site["line"], "access": site["access"], "tensor": site["tensor"],
                         "bytes": site["bytes"] * scale, "l2_bytes": site["sectors"] * SECTOR * scale,
                         "sectors_per_request": site["sectors"] / max(site["requests"], 1),
                         "ideal_per_request": site["ideal_sectors"] / max(site["requests"], 1),
                         "executions_per_program": site["executions"] / scale_count(profile)})
    for unique in profile["unique"]:
        if unique["tensor"] in per_tensor:
            key = "read_distinct" if unique["access"] == "load" else "written_distinct"
            per_tensor[unique["tensor"]][key] += unique["bytes"] * scale
    tensors_out = []
    for entry in per_tensor.values():
        entry["lines"] = sorted((line for line in entry.pop("lines") if line is not None), key=_place)
        # Each program reads its own part `times_read` times; `shared_by` programs read each element.
        entry["times_read"] = entry["read"] / entry["read_distinct"] if entry["read_distinct"] else 0.0
        entry["shared_by"] = entry["read_distinct"] / entry["bytes"] if entry["bytes"] else 0.0
        entry["write_sectors"] = max(1.0, entry.pop("store_sectors") / entry["written"]) if entry["written"] else 1.0
        tensors_out.append(entry)
    dots = [{**dot, "flops": 2 * dot["m"] * dot["n"] * dot["k"] * dot["executions"] * scale,
             "executions_per_program": dot["executions"] / scale_count(profile)} for dot in profile["dots"]]
    rereads = [{"tensor": r["tensor"], "distance": r["distance"], "bytes": r["bytes"] * scale}
               for r in profile["rereads"] if r["tensor"] in per_tensor]
    reductions = [{"line": r["line"], "shape": r["shape"], "axis": r["axis"],
                   "executions_per_program": r["executions"] / scale_count(profile)}
                  for r in profile["reductions"]]
    return {"tensors": tensors_out, "accesses": sorted(accesses, key=lambda a: -a["l2_bytes"]), "dots": dots,
            "rereads": rereads, "reductions": reductions, "itemsize": _itemsize(puzzle),
            "special": profile.get("special", 0) * scale, "arithmetic": profile.get("arithmetic", 0) * scale,
            "rounds": max(profile["rounds"] / scale_count(profile), 1.0)}


def scale_count(profile):
    return len(profile["programs"])


def _occupancy(spec, resources, config):
    """Programs that fit on one SM at once, and what limits them."""
    warps = resources["num_warps"]
    limits = {"programs": spec.programs_per_sm, "warps": spec.warps_per_sm // warps}
    if resources.get("registers"):
        per_warp = math.ceil(resources["registers"] * WARP / 256) * 256  # registers are allocated per warp, by 256
        limits["registers"] = spec.registers_per_sm // (per_warp * warps)
    if resources.get("shared"):
        limits["shared memory"] = spec.shared_per_sm // (resources["shared"] + 1024)
    limited_by = min(limits, key=limits.get)
    return {"programs_per_sm": max(limits[limited_by], 0), "limited_by": limited_by,
            "registers": resources.get("registers"), "spills": resources.get("spills", 0),
            "shared": resources.get("shared", 0), "num_warps": warps, "pipelined": resources.get("pipelined")}


def _ceilings(spec, counts, occupancy, programs, resources, config):
    resident = max(occupancy["programs_per_sm"], 0)
    concurrent = min(programs, spec.sms * resident) if resident else 0
    # A program reading its part again finds it in the L2 while what the programs running at once moved since fits.
    read = sum(min(t["read_distinct"], t["bytes"]) for t in counts["tensors"])
    read += sum(r["bytes"] * _l2_missed(spec, r["distance"] * concurrent) for r in counts["rereads"])
    # A store that fills only part of each 32-byte sector, to a tensor larger than the L2 can hold, has the sector
    # evicted before its neighbours fill the rest: DRAM reads the whole sector, and writes it back completed (what
    # the measured column-wise and strided stores cost: outer_add/column_strips, */strided_lanes).
    evicted_partly = [t for t in counts["tensors"] if t["write_sectors"] > 1 and t["bytes"] > L2_GONE * spec.l2_bytes]
    written = sum(min(t["written"], t["bytes"]) * (t["write_sectors"] if t in evicted_partly else 1)
                  for t in counts["tensors"])
    read += sum(min(t["written"], t["bytes"]) * t["write_sectors"] for t in evicted_partly)
    threads = occupancy["num_warps"] * WARP
    # Stored, then loaded back, in every round of the program (a pass through a loop's body, each loop's counted).
    spill_bytes = 2 * occupancy["spills"] * threads * programs * counts["rounds"]
    # Spilled registers live in local memory: in the L2 while what the programs running at once spill fits there,
    # in DRAM beyond it, out and back once a program (each round's reloads count in the L2's requests: charged to
    # DRAM every round, the spilling matmul tiles came out 2 to 4 times too slow).
    spill_dram = occupancy["spills"] * threads * programs * _l2_missed(spec, occupancy["spills"] * threads * concurrent)
    small = {t["name"]: t["bytes"] * spec.sms for t in counts["tensors"] if t["bytes"] <= L1_BYTES}
    l2 = spill_bytes
    for access in counts["accesses"]:  # a small tensor every program reads stays in each SM's L1 after its first read
        l2 += min(access["l2_bytes"], small.get(access["tensor"], math.inf))
    waves = programs / concurrent if concurrent else math.inf
    compute = sum(dot["flops"] / _dot_rate(spec, dot, occupancy) for dot in counts["dots"])
    # The exponentials and the rest of the arithmetic on the values issue to different pipes of the SM (its
    # special-function units, its CUDA cores), which work side by side: the busier one counts.
    compute += max(counts["special"] / (spec.special_per_sm_clock * spec.sms * spec.clock_hz),
                   counts["arithmetic"] / (spec.alu_per_sm_clock * spec.sms * spec.clock_hz))
    # A reduction waits for the one before it in the program's loop as a load waits for its round trip; the
    # programs of a wave wait side by side.
    reductions = _reductions_s(spec, counts, occupancy["num_warps"])
    latency = waves * (counts["rounds"] * spec.round_s + reductions) + math.ceil(programs / spec.sms) * spec.program_s
    if resident == 1:
        # Two programs on an SM overlap one's round trips to memory with the other's arithmetic; a program alone
        # has nothing to overlap them with, and they take turns: the larger waits for the smaller too (measured:
        # attention's 128x128 tiles, whose registers leave room for one program, 1.4 times the solution's time
        # at the same arithmetic).
        if compute >= latency:
            compute += latency
        else:
            latency += compute
    memory = (read + spill_dram) / spec.read_bandwidth + (written + spill_dram) / spec.write_bandwidth
    requests = l2 / spec.l2_bandwidth
    if resources.get("pipelined") is False and resident:
        # The dot waits for each iteration's tiles, and the next tiles wait for the dot: within a program, moving
        # them and multiplying them take turns; the other programs on its SM run theirs meanwhile, so that a
        # 1/resident share of the smaller is not hidden (measured: the one-stage matmuls and attentions, against
        # the pipelined solutions).
        fetch = max(memory, requests)
        if compute >= fetch:
            compute += fetch / resident
        elif memory >= requests:
            memory += compute / resident
        else:
            requests += compute / resident
    return {"memory": memory, "requests": requests, "latency": latency, "compute": compute}


def _l2_missed(spec, moved):
    """The share of data read again that DRAM serves, when the programs running at once moved `moved` bytes since
    they last read it: none up to L2_KEPT of the L2, all from L2_GONE of it, in proportion between."""
    return min(1.0, max(0.0, (moved - L2_KEPT * spec.l2_bytes) / ((L2_GONE - L2_KEPT) * spec.l2_bytes)))


def warps_along(shape, num_warps, vector):
    """The warps a program's `num_warps` lay along each axis of a block of `shape` in Triton's default layout
    (BlockedEncodingAttr::get): lanes, then warps, along the contiguous last axis first, `vector` elements a
    lane there; what is left goes to the first axis."""
    rank = len(shape)
    warps = [1] * rank
    lanes_left, threads_left, warps_left = WARP, WARP * num_warps, num_warps
    for axis in range(rank - 1, 0, -1):
        threads = min(max(threads_left, 1), max(1, shape[axis] // (vector if axis == rank - 1 else 1)))
        lanes = min(threads, lanes_left)
        warps[axis] = min(max(threads // lanes, 1), warps_left)
        warps_left //= warps[axis]
        lanes_left //= lanes
        threads_left //= threads
    warps[0] = warps_left
    return warps


def _reductions_s(spec, counts, num_warps):
    """What a program's reductions cost each wave of programs."""
    return sum(r["executions_per_program"] * _reduction_s(spec, r, num_warps, counts) for r in counts["reductions"])


def _reduction_s(spec, reduction, num_warps, counts):
    """What one reduction costs a wave of programs: within each warp (shuffles), or across warps (shared memory and
    barriers)."""
    return spec.reduction_block_s if warps_spanned(reduction, num_warps, counts) > 1 else spec.reduction_warp_s


def warps_spanned(reduction, num_warps, counts):
    """The warps a reduction's elements lie in. In a kernel with a tl.dot, a 2-D block is the dot's accumulator,
    whose warps split its rows."""
    shape, axis = reduction["shape"], reduction["axis"]
    if axis is None:
        return num_warps
    if counts["dots"] and len(shape) == 2:
        return num_warps if axis == 0 else 1
    return warps_along(shape, num_warps, max(1, VECTOR_BYTES // counts["itemsize"]))[axis]


def _dot_rate(spec, dot, occupancy):
    operands = (dot["a"], dot["b"])
    if all(o.startswith(FLOAT16_TYPES) for o in operands):
        rate = spec.float16_dot
    elif "TF32" in dot["precision"].upper() and "X3" not in dot["precision"].upper():
        rate = spec.tf32_dot
    else:
        return spec.float32_fma
    if _misses_warpgroup_mma(spec, dot, occupancy):  # the older mma.sync path instead
        rate *= MMA_V2_SHARE
    return rate


def _misses_warpgroup_mma(spec, dot, occupancy):
    """A tl.dot of fewer than 4 warps, or of fewer than 64 rows, cannot use the GPU's warpgroup MMA (Hopper's)."""
    return spec.warpgroup_mma and (occupancy["num_warps"] % 4 or dot["m"] < 64)


def _roofline(spec, puzzle, sizes, counts):
    """The least time any kernel needs: the puzzle's least bytes (its benchmark's) at the read/write mix, or its
    flops at the float16 matmul rate."""
    benchmark = puzzle.benchmark
    namespace = {**sizes, "itemsize": _itemsize(puzzle)}
    memory = compute = 0.0
    if benchmark.bytes is not None:
        least = float(benchmark.bytes(namespace))
        written = sum(t["bytes"] for t in counts["tensors"] if t["role"] == "output")
        written = min(written, least)
        memory = (least - written) / spec.read_bandwidth + written / spec.write_bandwidth
    if benchmark.flops is not None:
        compute = float(benchmark.flops(namespace)) / spec.float16_dot
    return max(memory, compute)


def _itemsize(puzzle):
    return {"float16": 2, "bfloat16": 2, "float32": 4}.get(puzzle.benchmark.dtype, 4)


def _advice(spec, counts, occupancy, programs, resources, config, ceilings, predicted):
    """The one or two things that cost most, in words, largest first: each fix's estimated time saved."""
    found = []

    def saving(**changes):
        changed = _ceilings(spec, {**counts, **changes.get("counts", {})}, changes.get("occupancy", occupancy),
                            programs, changes.get("resources", resources), config)
        return predicted - (max(changed.values()) + LAUNCH_S)

    # The L2's share of the time, without what a dot's tiles not loaded ahead add to it (told apart below).
    overlapped = ceilings if resources.get("pipelined") is not False else \
        _ceilings(spec, counts, occupancy, programs, {**resources, "pipelined": True}, config)
    for access in counts["accesses"]:
        ratio = access["sectors_per_request"] / max(access["ideal_per_request"], 1e-9)
        if ratio >= 1.5:
            fixed = [dict(a, l2_bytes=a["l2_bytes"] / ratio) if a is access else a for a in counts["accesses"]]
            whole = [dict(t, write_sectors=1.0) if t["name"] == access["tensor"] and access["access"] != "load" else t
                     for t in counts["tensors"]]
            found.append((saving(counts={"accesses": fixed, "tensors": whole}), (
                f"the {access['access']}s of {access['tensor']} at {places([access['line']])} are not coalesced: each warp "
                f"request touches {access['sectors_per_request']:.1f} sectors of 32 bytes where "
                f"{access['ideal_per_request']:.1f} would hold the same bytes. Make neighbouring lanes (the last "
                "axis of the block) read neighbouring addresses.")))
    for tensor in counts["tensors"]:
        if tensor["role"] != "output" and tensor["times_read"] >= 1.5:
            once = dict(tensor, read=tensor["read_distinct"])
            first_reads = [r for r in counts["rereads"] if r["tensor"] != tensor["name"]]
            fewer = [dict(a, l2_bytes=a["l2_bytes"] / tensor["times_read"]) if a["tensor"] == tensor["name"] else a
                     for a in counts["accesses"]]
            found.append((saving(counts={"accesses": fewer, "rereads": first_reads,
                                         "tensors": [once if t is tensor else t for t in counts["tensors"]]}), (
                f"each program reads its part of {tensor['name']} {tensor['times_read']:.1f} times "
                f"({places(tensor['lines'])}): after the first, each read comes from "
                "the L2 at best. Read it once and keep it in registers.")))
        elif tensor["role"] != "output" and counts["dots"] and tensor["shared_by"] >= 8 and \
                max(ceilings, key=ceilings.get) == "requests" and not occupancy["spills"]:
            # Tiles twice as large along the other operand's side load this one half as often: its own requests
            # halve (the spills' and the other tensors' stay).
            halved = [dict(a, l2_bytes=a["l2_bytes"] / 2) if a["tensor"] == tensor["name"] else a
                      for a in counts["accesses"]]
            found.append((saving(counts={"accesses": halved}), (
                f"each element of {tensor['name']} is loaded by {tensor['shared_by']:.0f} programs, once per tile "
                "that needs it: larger tiles load it fewer times (and a grouped program order, where the kernel has "
                "none, keeps it in the L2).")))
    if occupancy["spills"]:
        more_warps = " or more warps" if occupancy["num_warps"] < max(NUM_WARPS) else ""
        found.append((saving(occupancy={**occupancy, "spills": 0}), (
            f"ptxas spills {occupancy['spills']} bytes per thread to local memory: the blocks are too large for "
            f"the registers of {occupancy['num_warps']} warps. Use smaller blocks{more_warps}.")))
    for dot in counts["dots"]:
        if not all(o.startswith(FLOAT16_TYPES) for o in (dot["a"], dot["b"])) and "TF32" not in dot["precision"]:
            fast = [dict(d, a="fp16", b="fp16") if d is dot else d for d in counts["dots"]]
            # Operands the kernel made float32 from float16 inputs, or float32 inputs, which the tensor cores take
            # only rounded to TF32's 10 bits of mantissa (which a puzzle's tolerance may not allow).
            fix = "Keep the float16 operands (accumulate in float32)." if counts["itemsize"] == 2 else \
                ("The tensor cores take float32 only as TF32 (input_precision=\"tf32\"), rounded to 10 bits of "
                 "mantissa: where the result may not lose that much, the CUDA cores' rate is this dot's.")
            found.append((saving(counts={"dots": fast}), (
                f"the tl.dot at {places([dot['line']])} multiplies {dot['a']} by {dot['b']} in IEEE float32: that runs on "
                f"the CUDA cores, about 15 times slower than the tensor cores. {fix}")))
        elif _misses_warpgroup_mma(spec, dot, occupancy):
            found.append((ceilings["compute"] * (1 - MMA_V2_SHARE) if max(ceilings, key=ceilings.get) == "compute"
                          else 0.0, (
                f"the tl.dot at {places([dot['line']])} works on {dot['m']}x{dot['n']}x{dot['k']} tiles with "
                f"{occupancy['num_warps']} warps: an H100's warpgroup MMA needs tiles of at least 64 rows and a "
                "multiple of 4 warps; smaller tiles also load every element more often.")))
    looped = [r for r in counts["reductions"] if r["executions_per_program"] >= 2 and
              warps_spanned(r, occupancy["num_warps"], counts) > 1]
    if looped:
        once = [dict(r, executions_per_program=1) if r in looped else r for r in counts["reductions"]]
        lines = [r["line"] for r in looped if r["line"] is not None]
        found.append((saving(counts={"reductions": once}), (
            f"the reduction{'s' * (len(looped) > 1)} at {places(lines)} run{'s' * (len(looped) == 1)} "
            f"{max(r['executions_per_program'] for r in looped):.0f} times a program, each across its "
            f"{occupancy['num_warps']} warps: through shared memory, with barriers that stop every warp. Keep a block "
            "of partial results in the loop and reduce it once after it, or give each program fewer warps.")))
    looped_dots = [dot for dot in counts["dots"] if dot["executions_per_program"] >= 2]
    if resources.get("pipelined") is False and looped_dots:  # a dot a program runs once has no next tiles
        lines = [dot["line"] for dot in looped_dots if dot["line"] is not None]
        found.append((saving(resources={**resources, "pipelined": True}), (
            f"the tiles of the tl.dot{'s' * (len(set(lines)) > 1)} at {places(lines)} are loaded in "
            "the iteration that multiplies them, so each iteration waits for memory before its dot: the compiler "
            "loads the next tiles during this one's dot only in a `for` loop over range (or tl.range) with "
            "num_stages of 2 or more, not in a while loop.")))
    taking_turns = min(ceilings["latency"], ceilings["compute"]) if occupancy["programs_per_sm"] == 1 else 0.0
    turns_told = taking_turns > 0.05 * predicted
    if turns_told:
        found.append((taking_turns, (
            f"only one program fits on an SM at once, limited by {occupancy['limited_by']}: while it waits for "
            "memory the SM has nothing else to run, so its round trips and its arithmetic take turns. Tiles that "
            "leave room for two programs (smaller, or fewer pipeline stages where shared memory limits) overlap "
            "them.")))
    rounds_s = counts["rounds"] * spec.round_s
    reductions_s = _reductions_s(spec, counts, occupancy["num_warps"])
    # Else the reductions' advice, or the turns taken by a program alone on its SM.
    if max(ceilings, key=ceilings.get) == "latency" and rounds_s >= reductions_s and not turns_told:
        resident = occupancy["programs_per_sm"]
        load_bytes = sum(a["bytes"] for a in counts["accesses"] if a["access"] == "load") / max(programs, 1)
        if programs < spec.sms * max(resident, 1):
            why = (f"only {programs} programs for the GPU's {spec.sms} SMs, which could run {resident} each: the "
                   "blocks are so large that the grid leaves the GPU idle. Use smaller blocks.")
        elif occupancy["limited_by"] in ("registers", "shared memory") and resident < 4:
            why = (f"only {resident} program{'s' if resident != 1 else ''} fit on an SM at once, limited by "
                   f"{occupancy['limited_by']}: too few loads in flight to hide the memory's latency.")
        else:
            why = (f"each program moves only {load_bytes / max(counts['rounds'], 1):.0f} bytes per round trip to "
                   "memory: the blocks are too small to keep the memory busy. Make them larger (thousands of "
                   "elements per program).")
        found.append((ceilings["latency"] - max(v for k, v in ceilings.items() if k != "latency"), why))
    found.sort(key=lambda item: -item[0])
    return [f"{text} (about {_duration(saved)} of {_duration(predicted)})" for saved, text in found[:2]
            if saved > 0.05 * predicted]


# Where a line was written, as the grader tells it (KernelSource.describe_line): "layer_norm.py line 13",
# "01_softmax.ipynb cell 4, line 7"; or only its number, for a kernel profiled without a submission.
PLACE = re.compile(r"(?P<file>.*?)(?P<sep>,? ?)line (?P<line>\d+)")


def _place(line):
    """(file, separator, line number) of a line as the profile gives it (a number or where it was written)."""
    if isinstance(line, int):
        return "", "", line
    found = PLACE.fullmatch(str(line))
    return (found["file"], found["sep"], int(found["line"])) if found else (str(line), "", -1)


def places(lines):
    """'line 13', 'lines 13, 20' or 'layer_norm.py lines 13, 20, 27; helpers.py line 4' for lines as the profile
    gives them."""
    by_file = {}
    for file, sep, number in sorted({_place(line) for line in lines if line is not None}):
        by_file.setdefault((file, sep), []).append(number)
    told = []
    for (file, sep), numbers in by_file.items():
        if numbers == [-1]:
            told.append(file)
        else:
            told.append(f"{file}{sep}line{'s' * (len(numbers) > 1)} {', '.join(map(str, numbers))}")
    return "; ".join(told) or "an unknown line"


def _duration(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} us"


def summary(performance):
    """Lines of text for a report, from a Performance's to_dict()."""
    if performance["error"]:
        return [f"performance: {performance['error']}"]
    sizes = ", ".join(f"{k}={v}" for k, v in performance["sizes"].items())
    config = performance.get("config") or {}
    launched = ", ".join([*(f"{k}={v}" for k, v in config.get("kwargs", {}).items()),
                          *([f"{config['num_warps']} warps"] if "num_warps" in config else []),
                          *([f"{config['num_stages']} stages"] if "num_stages" in config else [])])
    lines = [f"on an {performance['gpu']} at {sizes}{f' ({launched})' if launched else ''}: about "
             f"{_duration(performance['predicted_s'])}, "
             f"{performance['fraction']:.0%} of the roofline ({_duration(performance['roofline_s'])}), bound by "
             f"{BOUND_WORDS[performance['bound']]}"]
    tuning = performance.get("tuning") or []
    if len(tuning) > 1:
        lines.append(f"  estimated at {'the first' if _launched_as(tuning[0], config) else 'one'} of the "
                     f"{len(tuning)} tuning configurations the GPU stage's autotuner times at that size; it keeps the "
                     "fastest (`triton-course inspect` estimates each)")
    return lines + [f"  - {advice}" for advice in performance["advice"]]


def _launched_as(tuning, config):
    """Whether a tuning configuration (course names, completed or not) is launched as `config` (completed)."""
    return all(config.get("kwargs", {}).get(k) == v for k, v in tuning.get("kwargs", {}).items()) and \
        all(config.get(k) == tuning[k] for k in ("num_warps", "num_stages") if k in tuning)


BOUND_WORDS = {"memory": "DRAM bandwidth", "requests": "the L2's bandwidth (memory requests)",
               "latency": "memory latency (too few loads in flight)", "compute": "arithmetic"}
