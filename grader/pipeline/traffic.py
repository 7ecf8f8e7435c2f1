"""The work a kernel does at the GPU stage's size, recorded in the interpreter: the performance stage's counters.

A correct kernel can still be slow, and most of why shows in its memory accesses. This stage launches the
kernel at the puzzle's benchmark size with the launch configuration the GPU stage would time first, but runs
only a few of its programs (the first and the last, and one in the middle where those two differ): on a GPU every
program of these kernels does the same kind of work, so a few stand for all of them; where no branch or loop bound
of the kernel depends on the program's ids or on what it loads (same_work_in_every_program), the first alone does. The tensors are allocated and never filled (the
pages a sampled program does not touch cost nothing), and a tl.dot returns its accumulator unchanged: the
values are never looked at, only the addresses.

For every load and store, by its line in the kernel: how many lanes were active, the bytes they moved, and the
32-byte sectors each warp request touched against the fewest that could hold the same bytes. A warp request
is 32 lanes of the block in the order the compiler lays them out: along the dimension the TritonGPU IR of the
compile for the estimate's GPU gives them (compile_check.lane_axes: the compiler decides it from the contiguity it can prove,
and Triton versions decide differently), else along the dimension whose addresses are contiguous, each lane
holding up to 16 bytes of consecutive elements. For every element a program reads again,
how many bytes it moved since it last read it (whether the L2 still holds it depends on what the programs
running at once moved meanwhile). How many round trips to memory a program waits for: one for each pass
through a loop's body that loads, its loads together, and one for the loads outside loops. For every tl.dot,
its shape and operand types. How many elements went through an exponential, and through the other arithmetic
on the values. For every reduction (tl.sum, tl.max,
tl.reduce, ...), the shape it reduces and along which axis: on a GPU one that spans several warps goes through
shared memory with a barrier. Runs in the sandboxed worker; what it returns is plain data that the
grader checks (performance.py turns it into an estimate).
"""
import ast
import math
import mmap
import sys
import time
from contextlib import contextmanager

import numpy as np
import triton.language as tl
from triton.runtime import interpreter

from .memcheck import MemoryChecker

SECTOR_BYTES = 32
WARP_LANES = 32
VECTOR_BYTES = 16  # the widest load one lane issues (ld.global.v4.b32)
SAMPLED_PROGRAMS = 3
PATTERNS_KEPT = 4096
# What the special-function units compute (one per element and SM clock slot), as the interpreter's builder names it.
SPECIAL = ("create_exp", "create_exp2", "create_log", "create_log2", "create_sqrt", "create_precise_sqrt",
           "create_rsqrt")
# Arithmetic on the values, done by the CUDA cores one element per lane: floating-point operations, their
# comparisons, conversions between float types, and selections (tl.where) of floats. Integer arithmetic is the
# addresses' and the masks': a vectorised load needs one address for several elements, the compiler drops the rest.
ARITHMETIC = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_precise_divf", "create_fma",
              "create_frem", "create_fneg", "create_fabs", "create_maximumf", "create_minimumf", "create_maxnumf",
              "create_minnumf", "create_clampf", "create_floor", "create_ceil", "create_fp_to_fp", "create_fp_ext",
              "create_fp_trunc", "create_select", "create_fcmpOLT", "create_fcmpOGT", "create_fcmpOLE",
              "create_fcmpOGE", "create_fcmpOEQ", "create_fcmpONE", "create_fcmpULT", "create_fcmpUGT",
              "create_fcmpULE", "create_fcmpUGE", "create_fcmpUEQ", "create_fcmpUNE")


class ProfileError(Exception):
    """The kernel could not be profiled at the benchmark size (it reached outside its tensors there)."""


class ProfileRegion:
    """A benchmark tensor: contiguous, its bounds only (no per-element bookkeeping at these sizes)."""

    def __init__(self, name, tensor):
        self.name = name
        self.base = tensor.data_ptr()
        self.itemsize = tensor.element_size()
        self.nbytes = tensor.numel() * self.itemsize

    def contains(self, addresses):
        return (addresses >= self.base) & (addresses < self.base + self.nbytes)


# What may differ from one program to another: its ids, and what it loads (or an atomic returns). Work decided by
# one of them (a loop's bounds, a branch) may differ too.
PROGRAM_DEPENDENT = ("program_id", "load", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
                     "atomic_or", "atomic_xchg", "atomic_xor", "load_tensor_descriptor", "inline_asm_elementwise",
                     "gather", "getattr")


def same_work_in_every_program(fn):
    """Whether every program of the kernel `fn` (its Python function) runs the same operations: no branch, loop
    bound or conditional expression of it, or of a @jit helper it calls, depends on the program's ids or on what
    it loads, as read from their source (False where it cannot be read). Its programs then differ in their
    addresses and masks only, and one stands for all of them."""
    try:
        return _independent(fn, frozenset(), 0, {})
    except Exception:  # source the analysis cannot follow: the programs are sampled as where they differ
        return False


def _independent(fn, tainted, depth, known):
    """same_work_in_every_program of `fn` called with the parameters in `tainted` depending on the program;
    `known`: what was found of each (function, tainted parameters) and each file's syntax tree."""
    key = (fn, tainted)
    if key in known:
        return known[key]
    known[key] = False  # until found otherwise (a helper that calls itself)
    definition = _definition(fn, known)
    if definition is None or depth > 8:
        return False
    tainted = set(tainted)
    namespace = fn.__globals__
    dependent = {getattr(tl, name) for name in PROGRAM_DEPENDENT if hasattr(tl, name)}

    def depends(expression):
        for node in ast.walk(expression):
            if isinstance(node, ast.Name) and node.id in tainted:
                return True
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                target = _named(node.func, namespace)
                # What a helper returns may come from what it loads; a call of a call's result is not followed.
                if name in PROGRAM_DEPENDENT or isinstance(node.func, ast.Call) or \
                        any(target is function for function in dependent) or _jit_helper(node.func, namespace):
                    return True
        return False

    def assigned(node):
        if isinstance(node, ast.Assign):
            return node.targets, node.value
        if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            return [node.target], node.value
        if isinstance(node, (ast.For, ast.comprehension)):
            return [node.target], node.iter
        return [], None

    nodes = list(ast.walk(definition))
    changed = True
    while changed:  # until all that depends on the program is known: a loop carries it to earlier lines
        changed = False
        for node in nodes:
            targets, value = assigned(node)
            if value is not None and depends(value):
                for name in (n for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)):
                    if name.id not in tainted:
                        tainted.add(name.id)
                        changed = True
    tests = [node.test for node in nodes if isinstance(node, (ast.If, ast.While, ast.IfExp))]
    tests += [node.iter for node in nodes if isinstance(node, (ast.For, ast.comprehension))]
    tests += [condition for node in nodes if isinstance(node, ast.comprehension) for condition in node.ifs]
    if any(depends(test) for test in tests):
        return False
    for call in (node for node in nodes if isinstance(node, ast.Call)):
        helper = _jit_helper(call.func, namespace)
        if helper is None:
            continue
        params = helper.__code__.co_varnames[:helper.__code__.co_argcount]
        given = dict(zip(params, call.args)) | {k.arg: k.value for k in call.keywords if k.arg}
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
            return False
        if not _independent(helper, frozenset(name for name, arg in given.items() if depends(arg)), depth + 1,
                            known):
            return False
    known[key] = True
    return True


def _definition(fn, known=None):
    """The `def` of the Python function `fn` in its file, or None; `known` keeps each file's syntax tree."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    known = {} if known is None else known
    if code.co_filename not in known:
        try:
            with open(code.co_filename) as source:
                known[code.co_filename] = ast.parse(source.read())
        except (OSError, SyntaxError, ValueError):
            known[code.co_filename] = None
    tree = known[code.co_filename]
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == code.co_name and \
                code.co_firstlineno in [node.lineno] + [d.lineno for d in node.decorator_list]:
            return node
    return None


def _named(func, namespace):
    """What a call's `func` (a name, or attributes of one) names in `namespace`, or None where it names nothing
    there (a local, a builtin)."""
    path = []
    while isinstance(func, ast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in namespace:
        return None
    value = namespace[func.id]
    for attribute in reversed(path):
        value = getattr(value, attribute, None)
    return value


def _jit_helper(func, namespace):
    """The Python function of the @jit helper a call's `func` names in `namespace`, or None (Triton's own)."""
    from .interpret import python_function

    function = python_function(_named(func, namespace))
    module = getattr(function, "__module__", "") or ""
    return function if function is not None and not (module == "triton" or module.startswith("triton.")) else None


def sampled_programs(grid):
    """The programs a profile may run: the first, the one in the middle of every axis and the last of a 3-D grid
    (where the work grows along an axis, as in causal attention, the three average to the grid's mean; where the
    first and the last do the same work, the two stand for every program and the middle one is not run)."""
    chosen = [(0, 0, 0), tuple(size // 2 for size in grid), tuple(size - 1 for size in grid)]
    return list(dict.fromkeys(chosen))[:SAMPLED_PROGRAMS]


class TrafficRecorder(MemoryChecker):
    """Records what each access moves instead of checking it against a case's views (the launch's `memory`)."""

    # An access's tensor is the one its first address falls in: the benchmark's tensors are apart, and following
    # every pointer through the arithmetic would cost a sixth of the profile.
    tags_pointers = False

    def __init__(self, regions, files, seconds=math.inf, lanes=()):
        super().__init__(regions, 0, (1, 1, 1), 1)
        self.seconds, self.deadline = seconds, time.monotonic() + seconds
        self.files = dict(files)  # the kernel's files -> the name of the module each holds
        # (file, line, access) -> the axis the compiled kernel lays a warp's lanes along (compile_check.lane_axes)
        self.lane_axes = {(file, line, access): axis for file, line, access, axis in lanes if axis is not None}
        # (file, line) of every load the compiled kernel has, or None where the compile did not say
        self.compiled_loads = {(file, line) for file, line, access, _ in lanes if access == "load"} or None
        self.sites = {}  # (module, line, access, tensor) -> counters
        self.dots = {}  # (module, line, m, n, k, a dtype, b dtype, precision) -> executions
        self.touched = {}  # (tensor, access) -> Footprint of the current program
        self.patterns = {}  # an access's addresses relative to its first, its alignment and mask -> warp_requests
        self.unique = {}  # (tensor, access) -> bytes distinct within each program, summed over programs
        self.moved = 1  # bytes the current program has loaded and stored so far, plus one (0: never touched)
        self.rereads = {}  # (tensor, log2 of the bytes the program moved since it last read them) -> bytes read again
        # Round trips to memory: the loads of one pass through a loop's body go out together and wait together;
        # the next iteration's, or another loop's, wait again. A round ends where a load of another loop (or of
        # none) comes, or one of its own loads comes again, except in a tl.static_range loop, whose iterations the
        # compiler unrolls into one body: there only a reduction between them (a barrier the loads after it wait
        # for, measured: softmax/chunked_static_range) ends it.
        self.rounds = 0
        self.round_body, self.round_loads = None, set()  # the current round's loops, and its loads' call sites
        self.round_reduced = False  # a reduction ran since the current round's first load
        self.loops = {}  # file -> [(first line of a loop's body, its last, its header's line, unrolled)]
        self.special = 0  # elements that went through an exponential, a logarithm or a square root
        self.arithmetic = 0  # elements that went through an operation of ARITHMETIC, or were reduced
        self.reducing = False  # inside a reduction, whose elements it counts itself (a combine_fn runs per element)
        self.reductions = {}  # (module, line, shape, axis) -> executions

    def check(self, pointers, mask, access, values=None):
        if time.monotonic() > self.deadline:  # an estimate is not worth a check that never ends
            raise ProfileError(f"interpreting its sampled programs took longer than {self.seconds:g} s")
        addresses = np.asarray(pointers.data).astype(np.int64, copy=False)
        active = np.ones(addresses.shape, bool) if mask is None else \
            np.broadcast_to(np.asarray(mask.data).astype(bool, copy=False), addresses.shape)
        if not active.any():
            return
        region = self._region_of(addresses[active])
        if region is None or not region.contains(addresses[active]).all():
            raise ProfileError(f"a {access} reaches outside {region.name if region else 'every tensor argument'} "
                               "at the benchmark size")
        places = self._places()
        file, line = places[0] if places else (None, None)
        if access == "load" and self.compiled_loads is not None and (file, line) not in self.compiled_loads:
            return  # the compiler removed it: the same addresses loaded before, or a value never used
        site = self.sites.setdefault((self.files.get(file), line, access, region.name),
                                     {"executions": 0, "lanes": 0, "bytes": 0, "sectors": 0, "ideal_sectors": 0,
                                      "requests": 0})
        axis = self.lane_axes.get((file, line, access))
        lanes, sectors, ideal, requests = self._warp_requests(addresses, active, region.itemsize,
                                                              axis if axis is not None and axis < addresses.ndim
                                                              else None)
        site["executions"] += 1
        if access == "load":
            self._count_round(places, region.name)
        site["lanes"] += lanes
        site["bytes"] += lanes * region.itemsize
        site["sectors"] += sectors
        site["ideal_sectors"] += ideal
        site["requests"] += requests
        # An element stored, then updated with atomics (an output zeroed, then added into) is written once.
        kept = "load" if access == "load" else "store"
        footprint = self.touched.get((region.name, kept))
        if footprint is None:
            footprint = self.touched[(region.name, kept)] = Footprint(region)
        distances = footprint.add(addresses[active], self.moved)
        if access == "load" and distances.size:
            for power, count in enumerate(np.bincount(np.log2(distances).astype(np.int64))):
                if count:
                    key = (region.name, power)
                    self.rereads[key] = self.rereads.get(key, 0) + int(count) * region.itemsize
        self.moved += lanes * region.itemsize

    def _warp_requests(self, addresses, active, itemsize, lane_axis):
        """warp_requests, remembered by the pattern of the addresses: a loop walks its tiles with the same pattern
        shifted (sectors and lanes do not change when every address moves by a whole number of sectors)."""
        first = int(addresses.flat[0])
        key = (itemsize, addresses.shape, first % SECTOR_BYTES, (addresses - first).tobytes(), active.tobytes(),
               lane_axis)
        counts = self.patterns.get(key)
        if counts is None:
            counts = warp_requests(addresses, active, itemsize, lane_axis)
            if len(self.patterns) < PATTERNS_KEPT:
                self.patterns[key] = counts
        return counts

    def _region_of(self, addresses):
        return next((r for r in self.regions.values() if r.contains(addresses[:1]).all()), None)

    def _place(self):
        """(module, line) of the kernel (or of its @jit helper) that issued the operation, or (None, None)."""
        places = self._places(1)
        return (self.files.get(places[0][0]), places[0][1]) if places else (None, None)

    def _places(self, skipped=0):
        """[(file, line)] of the kernel's frames that issued the access, from the @jit helper that issued it out
        to the kernel's own line that called it."""
        frame, places = sys._getframe(2 + skipped), []
        while frame is not None:
            if frame.f_code.co_filename in self.files:
                places.append((frame.f_code.co_filename, frame.f_lineno))
            frame = frame.f_back
        return places

    def _count_round(self, places, tensor):
        """Count the load issued from `places` (_places) in the current round, or in a new one."""
        loops = [self._innermost_loop(file, line) for file, line in places]
        body = tuple(loops)
        nearest = next((loop for loop in loops if loop is not None), None)
        unrolled = nearest is not None and nearest[1]
        key = (tuple(places), tensor)
        if body != self.round_body or (key in self.round_loads and (not unrolled or self.round_reduced)):
            self.rounds += 1
            self.round_body, self.round_loads, self.round_reduced = body, set(), False
        self.round_loads.add(key)

    def _innermost_loop(self, file, line):
        """(header line, unrolled) of the innermost loop of `file` whose body holds `line`, or None."""
        if file not in self.loops:
            self.loops[file] = _loops(file)
        inner = None
        for first, last, header, unrolled in self.loops[file]:
            if first <= line <= last and (inner is None or header > inner[0]):
                inner = (header, unrolled)
        return inner

    def end_program(self):
        for key, footprint in self.touched.items():
            self.unique[key] = self.unique.get(key, 0) + footprint.distinct_bytes()
        self.touched, self.moved, self.round_body, self.round_loads, self.round_reduced = {}, 1, None, set(), False

    def work(self):
        """Every counter so far, as one flat mapping: two programs did the same work when each added the same."""
        counts = {("site", key, field): value for key, site in self.sites.items() for field, value in site.items()}
        for name in ("dots", "unique", "rereads", "reductions"):
            counts.update(((name, key), value) for key, value in getattr(self, name).items())
        return {**counts, "special": self.special, "arithmetic": self.arithmetic, "rounds": self.rounds}

    @contextmanager
    def installed(self):
        builder = interpreter.interpreter_builder

        def dot(a, b, d, input_precision, *rest):
            (m, k), n = np.asarray(a.data).shape[-2:], np.asarray(b.data).shape[-1]
            key = (*self._place(), int(m), int(n), int(k), str(a.dtype), str(b.dtype), str(input_precision))
            self.dots[key] = self.dots.get(key, 0) + 1
            return d  # only the addresses matter here: the product's values are never looked at

        def counted(create):
            def special(arg):
                self.special += np.asarray(arg.data).size
                return create(arg)
            return special

        def arithmetic(name, create):
            def operation(*args):
                result = create(*args)
                if not self.reducing and (name != "create_select" or result.dtype.is_floating()):
                    self.arithmetic += np.asarray(result.data).size
                return result
            return operation

        reduce = interpreter.ReduceOps.apply_impl

        def reduction(operation, inputs):
            shape = tuple(int(size) for size in np.asarray(inputs[0].handle.data).shape)
            axis = getattr(operation.axis, "value", operation.axis)  # a tl.constexpr where a version keeps it
            axis = None if axis is None else int(axis) % max(len(shape), 1)
            key = (*self._place(), shape, axis)
            self.reductions[key] = self.reductions.get(key, 0) + 1
            self.round_reduced = True
            self.arithmetic += math.prod(shape) * len(inputs)
            self.reducing = True
            try:
                return reduce(operation, inputs)
            finally:
                self.reducing = False

        arithmetic_names = [name for name in ARITHMETIC if hasattr(builder, name)]  # some versions lack a few
        saved = {name: builder.__dict__.get(name) for name in ("create_dot", *SPECIAL, *arithmetic_names)}
        builder.create_dot = dot
        for name in SPECIAL:
            setattr(builder, name, counted(getattr(builder, name)))
        for name in arithmetic_names:
            setattr(builder, name, arithmetic(name, getattr(builder, name)))
        interpreter.ReduceOps.apply_impl = reduction
        try:
            with super().installed():
                yield self
        finally:
            interpreter.ReduceOps.apply_impl = reduce
            for name, value in saved.items():
                if value is None:
                    delattr(builder, name)
                else:
                    setattr(builder, name, value)

    def counters(self):
        return {"sites": [{"module": module, "line": line, "access": access, "tensor": tensor, **counts}
                          for (module, line, access, tensor), counts in self.sites.items()],
                "dots": [{"module": module, "line": line, "m": m, "n": n, "k": k, "a": a, "b": b,
                          "precision": precision, "executions": count}
                         for (module, line, m, n, k, a, b, precision), count in self.dots.items()],
                "unique": [{"tensor": tensor, "access": access, "bytes": int(count)}
                           for (tensor, access), count in self.unique.items()],
                "rereads": [{"tensor": tensor, "distance": 2 ** power, "bytes": count}
                            for (tensor, power), count in self.rereads.items()],
                "reductions": [{"module": module, "line": line, "shape": list(shape), "axis": axis,
                                "executions": count}
                               for (module, line, shape, axis), count in self.reductions.items()],
                "special": int(self.special), "arithmetic": int(self.arithmetic), "rounds": int(self.rounds)}


def _loops(file):
    """[(first line of the body, last line, header line, unrolled)] of every for and while loop in `file`;
    unrolled: a for over tl.static_range."""
    try:
        with open(file) as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
        return []
    loops = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and node.body:
            call = node.iter.func if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) else None
            name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "")
            loops.append((node.body[0].lineno, node.end_lineno, node.lineno, name == "static_range"))
    return loops


class Footprint:
    """The elements of one tensor a program touched, and when: a map of the tensor holding, for each element, how
    many bytes the program had moved when it last touched it (a sort of a million addresses per program would cost
    more than the program's interpretation)."""

    def __init__(self, region):
        self.region = region
        elements = region.nbytes // region.itemsize
        # Anonymous memory whose pages are zeroed when first touched, never read whole: a program touches a few
        # rows of a large tensor, and in huge pages (numpy asks for them for large arrays) each row would cost 2 MB
        # to zero instead of 4 kB.
        pages = mmap.mmap(-1, max(elements, 1) * 8, **({"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS}
                                                        if hasattr(mmap, "MAP_ANONYMOUS") else {}))
        try:
            pages.madvise(mmap.MADV_NOHUGEPAGE)
        except (AttributeError, OSError):  # no such advice here (macOS, Windows, a kernel without huge pages)
            pass
        self.last = np.frombuffer(pages, np.int64, elements)
        self.distinct = 0

    def add(self, addresses, moved):
        """Mark the elements at `addresses` touched when the program had moved `moved` bytes; returns, for each
        one touched before, the bytes the program moved since."""
        elements = (addresses - self.region.base) // self.region.itemsize
        before = self.last[elements]
        fresh = elements[before == 0]
        if fresh.size:
            # Each fresh element keeps exactly one of the marks written to it, however often it repeats here.
            marks = -np.arange(1, fresh.size + 1)
            self.last[fresh] = marks
            self.distinct += int(np.count_nonzero(self.last[fresh] == marks))
        self.last[elements] = moved
        return moved - before[before > 0]

    def distinct_bytes(self):
        return self.distinct * self.region.itemsize


def warp_requests(addresses, active, itemsize, lane_axis=None):
    """(active lanes, sectors touched, fewest sectors that hold the same distinct bytes, warp requests) of one
    access, its lanes grouped into warp requests as the compiler lays them out: along `lane_axis` where the
    compiled kernel says (compile_check.lane_axes), else along the axis whose addresses are contiguous, as a
    compiler that can prove it does."""
    if addresses.ndim == 0:
        return 1, 1, 1, 1
    fastest = _contiguous_axis(addresses, itemsize) if lane_axis is None else lane_axis
    addresses = np.moveaxis(addresses, fastest, -1)
    active = np.moveaxis(active, fastest, -1)
    run = addresses.shape[-1]
    contiguous = run > 1 and bool((np.diff(addresses, axis=-1) == itemsize).all())
    vector = min(max(1, VECTOR_BYTES // itemsize), run) if contiguous else 1
    width = WARP_LANES * vector
    flat, on = addresses.reshape(-1), active.reshape(-1)
    padding = -flat.size % width
    if padding:
        flat = np.concatenate([flat, np.zeros(padding, np.int64)])
        on = np.concatenate([on, np.zeros(padding, bool)])
    flat, on = flat.reshape(-1, width), on.reshape(-1, width)
    used = on.any(axis=1)
    flat, on = flat[used], on[used]
    sectors = _distinct_per_row(np.where(on, flat // SECTOR_BYTES, -1))
    distinct = _distinct_per_row(np.where(on, flat, -1))
    ideal = -(-distinct * itemsize // SECTOR_BYTES)
    return int(on.sum()), int(sectors.sum()), int(ideal.sum()), int(used.sum())


def _contiguous_axis(addresses, itemsize):
    """The axis along which neighbouring elements are neighbours in memory (the compiler makes it the fastest),
    the last one when none is."""
    for axis in [addresses.ndim - 1, *range(addresses.ndim - 1)]:
        if addresses.shape[axis] > 1 and (np.diff(addresses, axis=axis) == itemsize).all():
            return axis
    return addresses.ndim - 1


def _distinct_per_row(values):
    """Distinct values >= 0 in each row."""
    ordered = np.sort(values, axis=1)
    changes = (np.diff(ordered, axis=1) != 0) & (ordered[:, 1:] >= 0)
    return changes.sum(axis=1) + (ordered[:, 0] >= 0)


class Plan:
    """The GPU stage's first launch of a kernel, made on the CPU: the benchmark's first size, the first valid
    configuration of the submission's (read_configs) or the course's, or the one `chosen` ({"kwargs",
    "num_warps", "num_stages"} in the course's names); its tensors allocated, never filled."""

    def __init__(self, kernel, puzzle, configs, chosen=None, constants=None):
        from .compile_check import benchmark_launch
        from .interpret import bind_arguments, python_function, with_constants

        fn = python_function(kernel)
        params = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        sizes = dict(puzzle.benchmark.sizes[0])
        self.config = launch_config(puzzle, configs, params, chosen)
        tensors, args, grid = benchmark_launch(puzzle, self.config, sizes, device="cpu")
        self.args = with_constants(kernel, args, constants)  # the kernel's own, as its configuration gives them
        self.grid = grid + (1,) * (3 - len(grid))
        names = {tensor.data_ptr(): name for name, tensor in tensors.items()}
        self.bound = bind_arguments(kernel, self.args)
        self.regions = {param: ProfileRegion(names.get(value.data_ptr(), param), value)
                        for param, value in self.bound.items() if hasattr(value, "data_ptr")}


def profile(kernel, plan, lanes, files, seconds=math.inf, namespaces=None):
    """The counters of `kernel` launched as `plan` says, its sampled programs interpreted (in the sandbox), each
    with the module and line that issued it; `files`: {the kernel's files: the name of each one's module};
    `lanes`: how its compile for the estimate's GPU lays out lanes (compile_check.lane_axes); `namespaces`: the globals
    of the modules its @jit functions are in (interpreting()), the kernel's alone by default. Raises ProfileError
    (also once `seconds` have passed), or what the kernel raises."""
    from .interpret import interpreting, launch, python_function

    fn = python_function(kernel)
    recorder = TrafficRecorder(plan.regions, files, seconds, lanes or ())
    sampled = sampled_programs(plan.grid)
    if same_work_in_every_program(fn):
        sampled = sampled[:1]
    programs, after = [], [{}]  # after: the counters after each program run
    with interpreting(namespaces or [fn.__globals__]), np.errstate(all="ignore"):
        for program in dict.fromkeys(sampled[:1] + sampled[-1:] + sampled[1:-1]):  # the first, the last, the middle
            if len(programs) == 2 and _added(after[0], after[1]) == _added(after[1], after[2]):
                break  # the first and the last program did the same work
            launch(kernel, plan.bound, plan.grid, [program], recorder, files)
            recorder.end_program()
            programs.append(program)
            after.append(recorder.work())
    return {"programs": [list(p) for p in programs], **recorder.counters()}


def _added(before, after):
    """What one program added to the counters."""
    return {key: value - before.get(key, 0) for key, value in after.items() if value != before.get(key, 0)}


def launch_config(puzzle, configs, params, chosen=None):
    """The launch configuration the performance stage profiles, at the benchmark's first size (both sides)."""
    from .configs import validate_configs

    valid, _ = validate_configs(puzzle, configs, params)
    return puzzle.benchmark.launch_config(chosen or (valid[0] if valid else {}), dict(puzzle.benchmark.sizes[0]))
