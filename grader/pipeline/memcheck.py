"""Check every active lane of every load, store and atomic against the tensor arguments, before it runs.

Triton's interpreter copies memory for each active lane with no bounds check at all: an overrun reads or
writes the neighbouring heap, or segfaults. The checker wraps the interpreter builder's memory operations
and refuses an access before the copy happens. Pointers are tagged with the argument they derive from
(the tag follows splat, broadcast, addptr, reshape, ...), so an overrun that happens to land inside
another argument is still reported against the right tensor. A view with gaps (a split column, x[:, ::2])
allows exactly its own elements, not the span between its first and last.
"""
import os
import sys
import zlib
from contextlib import contextmanager

import numpy as np
import triton
from triton._C.libtriton import ir
from triton.runtime import interpreter

from ..settings import DEFAULT

# Where Triton's and the grader's own frames come from: a load's site is the kernel's lines that issued it.
LIBRARIES = (os.path.dirname(triton.__file__), os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAG = "_grader_region"
WHY = "_grader_why"  # says (when called) why a block pointer's or descriptor's access left its tensor
MIXED = "_grader_regions"  # the regions a pointer mixing several arguments' (tl.where between them) may point into
# Builder operations whose result is a pointer derived from a pointer operand.
POINTER_PROPAGATING = ("create_addptr", "create_splat", "create_unsplat", "create_broadcast", "create_expand_dims",
                       "create_reshape", "create_trans", "create_select", "create_cat", "create_join", "create_split",
                       "create_gather", "create_bitcast")


ATOMIC_XCHG = ir.ATOMIC_OP.XCHG


class OutOfBounds(Exception):
    """A kernel touched memory outside its tensor arguments; nothing was read or written."""

    def __init__(self, access, region, program, dims, offsets, bad, active, reason):
        self.access, self.region, self.program, self.dims = access, region, program, dims
        self.offsets, self.bad, self.active, self.reason = offsets, bad, active, reason
        super().__init__(self.message())

    @property
    def tensor(self):
        return self.region.buffer.name if self.region else None

    def message(self):
        program = program_name(self.program, self.dims)
        shown = ", ".join(_format_offset(o) for o in self.offsets[:DEFAULT.offsets_shown])
        if self.bad > DEFAULT.offsets_shown:
            shown += f", ... ({self.bad} lanes in all)"
        if self.region is None:
            return (f"program {program}: a {self.access} through a pointer that is not inside any tensor argument "
                    f"({self.bad} of {self.active} active lanes). Pointers must be built from the tensor arguments.")
        standing = f"the puzzle's {self.region.course_param}; " if self.region.course_param != self.region.param else ""
        where = f"{self.region.param} ({standing}{self.tensor}: {self.region.describe()})"
        return (f"program {program}: {self.access} of {self.bad} of {self.active} active lanes outside {where}, "
                f"at element offsets {shown} from {self.region.param}. {self.reason}")


def _newly_loaded(buffer, positions, code, site):
    """How many of the elements at `positions` count toward the budget of a load by program `code` at `site`:
    each distinct element the program had not loaded yet, and each it loads again at the same site; marks them.
    A second sweep of the site over what it loaded, load for load in the same order (one loop body run twice, a
    two-pass softmax written with tl.static_range(2)), is taken back once it is complete: it is negative then;
    later ones are taken back at the launch's end where every program repeats alike (passes_taken_back).
    The interpreter runs one program after another: an element last marked by `code` was marked by this program."""
    at_site = buffer.loaded_at.get(site)
    if at_site is None:
        at_site = buffer.loaded_at[site] = np.full(buffer.counted_by.size, -1, dtype=np.int64)
    again = int(np.count_nonzero(at_site[positions] == code))
    at_site[positions] = code
    fresh = positions[buffer.counted_by[positions] != code]
    # A position repeated within one load keeps one of its indices: the count of kept indices is the distinct count.
    buffer.counted_by[fresh] = -2 - np.arange(fresh.size)
    distinct = int(np.count_nonzero(buffer.counted_by[fresh] == -2 - np.arange(fresh.size)))
    buffer.counted_by[fresh] = code
    counted = distinct + again
    history = buffer.sweeps.setdefault(site, [])
    if not history or history[-1].program != code:
        history.append(SiteSweeps(code, positions))
        return counted
    return counted - history[-1].taken_back(positions, counted)


def passes_taken_back(buffer):
    """What the sweeps after the second give back: at each site where every program that loaded there repeated its
    first sweep as many times, load for load (passes of the algorithm: a three-pass softmax in one loop body run
    with tl.static_range(3), which loads what three loops of their own would), all of them; where the programs
    repeat unlike (tiles above the diagonal wrapped onto the ones a program has: more sweeps the fewer it has),
    none."""
    return sum(sum(sweeps.later for sweeps in history) for history in buffer.sweeps.values()
               if len({sweeps.repeats for sweeps in history}) == 1)


class SiteSweeps:
    """One program's loads at one site: its first sweep (the loads until the site loads its first addresses again),
    then how many later sweeps repeat it load for load. The second's count is taken back as it completes, the
    later ones' only where every program repeats alike (passes_taken_back); from a sweep that strays from the first
    (tiles clamped onto one the program has) every load counts in full."""

    def __init__(self, program, positions):
        self.program = program
        self.first = [_signature(positions)]
        self.state = "first"  # first | again | done
        self.matched = 0  # loads of the first sweep the sweep under way has repeated
        self.held = 0  # what the sweep under way counted so far
        self.repeats = 0  # complete sweeps after the first
        self.later = 0  # what those after the second counted

    def taken_back(self, positions, counted):
        """What this load's sweep gives back now: the second sweep's count once it is complete, else 0."""
        signature = _signature(positions)
        if self.state == "first":
            if signature != self.first[0]:
                self.first.append(signature)
                return 0
            self.state = "again"
        elif self.state == "done":
            return 0
        if signature != self.first[self.matched]:
            self.state = "done"
            return 0
        self.matched += 1
        self.held += counted
        if self.matched < len(self.first):
            return 0
        held, self.matched, self.held = self.held, 0, 0
        self.repeats += 1
        if self.repeats == 1:
            return held
        self.later += held
        return 0


def _signature(positions):
    """Which elements a load loaded, in order (two loads of the same code and offsets give the same)."""
    return positions.size, zlib.crc32(np.ascontiguousarray(positions).tobytes())


def _holds(buffer, positions, values):
    """Whether each element at `positions` of the buffer's parent already holds the value in `values` (NaN holds
    NaN); False where the two cannot be compared."""
    import torch

    try:
        held = buffer.parent.reshape(-1)[torch.from_numpy(np.ascontiguousarray(positions))]
        given = torch.from_numpy(np.ascontiguousarray(values))
        # The interpreter holds bfloat16 as its bits (uint16): read them as the tensor's type, never convert them.
        given = given.view(held.dtype) if given.element_size() == held.element_size() else given.to(held.dtype)
    except (TypeError, RuntimeError):
        return np.zeros(positions.size, dtype=bool)
    same = held == given
    if held.is_floating_point():
        same |= held.isnan() & given.isnan()
    return same.numpy()


def _load_site():
    """The kernel's lines (outside Triton and the grader) that issued the access now running, outermost last."""
    frame, lines = sys._getframe(1), []
    while frame is not None:
        if not frame.f_code.co_filename.startswith(LIBRARIES):
            lines.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return tuple(lines)


def _format_offset(offset):
    return str(int(offset)) if float(offset).is_integer() else f"{offset:.2f}"


class Region:
    """The memory one pointer argument may touch: exactly the elements of its view, nothing between them."""

    def __init__(self, buffer, launch_index, param, course_param=None):
        view = buffer.views[launch_index]
        self.buffer, self.launch_index, self.param = buffer, launch_index, param
        self.course_param = course_param or param  # the puzzle's name for the parameter the kernel calls `param`
        self.numel = view.numel()
        self.itemsize = view.element_size()
        self.storage_base = buffer.parent.data_ptr()
        self.storage_numel = buffer.parent.numel()
        self.base = view.data_ptr()
        positions = np.sort(buffer.positions[launch_index].reshape(-1).numpy())
        self.lo, self.hi = int(positions[0]), int(positions[-1]) + 1
        self.allowed = None if self.hi - self.lo == len(positions) else positions

    def locate(self, addresses, size=None):
        """Parent positions of the addresses (the first element each access covers), and which accesses lie
        wholly on elements of the view. `size`: the bytes each access moves (its pointer's element), the
        tensor's own element size unless the kernel reads it through a pointer of another type, where every
        byte must lie on the view and the address be aligned to the access, as a GPU requires."""
        offsets = addresses.view(np.int64) - self.storage_base
        positions = offsets // self.itemsize
        size = size or self.itemsize
        if size == self.itemsize:
            if self.allowed is None and offsets.min() >= self.lo * self.itemsize and \
                    offsets.max() < self.hi * self.itemsize and not (offsets % self.itemsize).any():
                return positions, None  # the common case, all inside: no per-lane mask to build
            inside = (offsets % self.itemsize == 0) & (positions >= self.lo) & (positions < self.hi)
            covered = 1
        else:
            last = (offsets + size - 1) // self.itemsize
            inside = (addresses.view(np.int64) % size == 0) & (positions >= self.lo) & (last < self.hi)
            covered = -(-size // self.itemsize)
        for element in range(covered) if self.allowed is not None else ():
            found = np.searchsorted(self.allowed, positions + element).clip(max=len(self.allowed) - 1)
            inside &= self.allowed[found] == positions + element
        return positions, inside

    def covered(self, positions, size):
        """Every element position the accesses at `positions` touch, `size` bytes each."""
        count = -(-size // self.itemsize)
        return positions if count <= 1 else (positions[:, None] + np.arange(count)).reshape(-1)

    def spans(self, address):
        return self.storage_base <= address < self.storage_base + self.storage_numel * self.itemsize

    def describe(self):
        view = self.buffer.views[self.launch_index]
        shape = tuple(view.shape)
        if self.allowed is None and view.is_contiguous():
            return f"{self.numel} element{'s' if self.numel > 1 else ''}, offsets 0..{self.numel - 1}"
        return f"view of shape {shape}, stride {tuple(view.stride())}"


class MemoryChecker:
    """Holds the regions of one launch and refuses, before the copy, any access outside them."""

    tags_pointers = True  # every pointer computed from an argument's carries its region (TAG)

    def __init__(self, regions, launch_index, grid, dims, zero_undefined=False):
        self.regions = regions  # parameter name -> Region
        self.launch_index = launch_index
        self.grid, self.dims = grid, dims
        # Masked-off lanes of a load without other= hold 0, as NVIDIA's compiler leaves them, instead of NaN.
        self.zero_undefined = zero_undefined
        self.undefined_loaded = False  # a load without other= had masked-off lanes
        self.passes_over_nan = False  # an operation ran whose result a NaN need not make NaN (NAN_BLIND)
        self.barriers = 0  # tl.debug_barrier()s run: a program's lanes see each other's stores only past one
        # Block shape -> (program, buffer, loading lanes, positions, storing lanes) of the elements a program's lanes
        # loaded from its other lanes' stores, until its next store of a block of that shape (_lanes_hand_over)
        self.handed = {}

    def tag(self, param, handle):
        setattr(handle, TAG, self.regions[param])
        return handle

    def check(self, pointers, mask, access, values=None):
        """Refuse an access outside the tensor arguments and record it; `values`: what a store writes."""
        addresses = pointers.data
        active = None
        if mask is not None:  # a mask is lanes on or off, whatever integer type the interpreter gave it
            active = np.broadcast_to(np.asarray(mask.data).astype(bool, copy=False), addresses.shape)
            addresses = addresses[active]
        addresses = addresses.reshape(-1)
        region = getattr(pointers, TAG, None)
        if not addresses.size:
            if access == "load":
                # A load whose every lane is masked off still runs, its block waited for: a load budget counts it
                # whole (a causal kernel that visits every tile and masks the ones it should skip), for every tensor
                # its pointers may point into.
                for possible in {region} if region is not None else getattr(pointers, MIXED, ()):
                    self._count_loads(possible, pointers.data.reshape(-1))
            return
        size = _access_bytes(pointers)
        if region is not None:
            positions, inside = region.locate(addresses, size)
            if inside is not None and not inside.all():
                raise self._violation(access, region, addresses[~inside], positions[~inside], addresses.size,
                                      getattr(pointers, WHY, None), size)
            if values is not None and size <= region.itemsize:  # one element a lane: the values line up
                values = np.broadcast_to(np.asarray(values.data), pointers.data.shape)
                values = (values[active] if active is not None else values).reshape(-1)
            else:
                values = None
            lanes = None
            if size == region.itemsize and pointers.data.size > 1:  # a block's lanes, one element each
                lanes = (np.flatnonzero(active) if active is not None else np.arange(addresses.size),
                         hash(pointers.data.shape) & (2 ** 62 - 1))
            self._record(access, region, region.covered(positions, size), values, lanes)
            return
        inside = np.zeros(addresses.size, dtype=bool)
        for region in self.regions.values():
            positions, in_region = region.locate(addresses, size)
            in_region = np.ones(addresses.size, dtype=bool) if in_region is None else in_region
            self._record(access, region, region.covered(positions[in_region], size))
            inside |= in_region
        if not inside.all():
            raise OutOfBounds(access, None, interpreter.interpreter_builder.grid_idx, self.dims, [],
                              int((~inside).sum()), addresses.size, "")

    def _record(self, access, region, positions, values=None, lanes=None):
        code = (self.launch_index << 32) | _linear_program(interpreter.interpreter_builder.grid_idx, self.grid)
        if lanes is not None:
            self._lanes_hand_over(access, region.buffer, positions, code, *lanes)
        elif access == "store":  # a scalar's, or of another element size: no block's lanes to tell
            region.buffer.stored_block[positions] = -1
        if access != "store" and region.buffer.read_unwritten is None:  # an output is garbage until stored
            unwritten = region.buffer.writers[positions] == -1
            if unwritten.any():
                region.buffer.read_unwritten = (int(positions[unwritten][0]), code)
        buffer = region.buffer
        if buffer.crossed is None and access == "atomic":
            self._crossing(buffer, positions, code)
        if access == "load":
            if buffer.crossed is None and buffer.spec.role == "input":
                self._crossing(buffer, positions, code)
            buffer.loads += _newly_loaded(buffer, positions, code, _load_site())
            buffer.readers[positions] = code
            return
        writers = buffer.writers
        if access == "store" and buffer.race is None:
            previous = writers[positions]
            clash = (previous != -1) & (previous != code) & (previous >> 32 == self.launch_index)
            if clash.any() and values is not None:
                # The value the element holds again (tiles that overlap at an edge, each writing the same result):
                # the same in any order, but work repeated.
                again = np.flatnonzero(clash)[_holds(buffer, positions[clash], values[clash])]
                if again.size:
                    if buffer.stored_again is None:
                        buffer.stored_again = np.zeros(writers.size, dtype=np.int64)
                    np.add.at(buffer.stored_again, positions[again], 1)
                    buffer.repeated = max(buffer.repeated, int(buffer.stored_again[positions[again]].max()))
                clash[again] = False
            if clash.any():  # atomics are meant to be shared; plain stores are not
                buffer.race = (int(positions[clash][0]), int(previous[clash][0]), code)
        writers[positions] = code
        if access == "store":
            buffer.stored_by[positions] = code

    def _lanes_hand_over(self, access, buffer, positions, code, lanes, shape):
        """Note the first element a lane of a block load reads that another lane of a block of the same shape, in the
        same program, stored with no tl.debug_barrier() run between, where that lane then stores (it is active in the
        program's next store of a block of that shape): on a GPU those lanes are other threads, in other warps,
        running at their own pace, and the load may come before the store (the interpreter runs each operation over
        the whole block before the next). A lane whose store is masked off threw what it read away (a wrapped or
        clamped reload, `cols % N`). A scalar's store or load, or a block of another shape (whose lanes the compiler
        lays out otherwise), is not told."""
        if access == "store":
            pending = self.handed.pop(shape, None)
            if pending is not None and pending[0] == code and pending[1].lane_race is None:
                storing = np.isin(pending[2], lanes)
                if storing.any():
                    first = np.argmax(storing)
                    pending[1].lane_race = (int(pending[3][first]), code, int(pending[4][first]),
                                            int(pending[2][first]))
            buffer.stored_lane[positions] = lanes
            buffer.stored_block[positions] = shape
            buffer.stored_epoch[positions] = self.barriers
            return
        if access != "load" or buffer.lane_race is not None:
            return
        handed = ((buffer.stored_by[positions] == code) & (buffer.stored_block[positions] == shape) &
                  (buffer.stored_epoch[positions] == self.barriers) & (buffer.stored_lane[positions] != lanes))
        if handed.any():
            found = (lanes[handed], positions[handed], buffer.stored_lane[positions[handed]])
            earlier = self.handed.get(shape)
            if earlier is not None and earlier[0] == code and earlier[1] is buffer:
                found = tuple(np.concatenate([old, new]) for old, new in zip(earlier[2:], found))
            self.handed[shape] = (code, buffer, *found)

    def _lanes_agree(self, pointers, value, mask):
        """Note, as a race of the program with itself, the first element two active lanes of one store (or
        tl.atomic_xchg) write different values to: the interpreter keeps the last lane's, a GPU either's (a row's
        running sums all stored to one place, for its total to win)."""
        region = getattr(pointers, TAG, None)
        addresses = np.asarray(pointers.data)
        if region is None or region.buffer.race is not None or addresses.size < 2:
            return
        values = np.broadcast_to(np.asarray(value.data), addresses.shape)
        if mask is not None:
            active = np.broadcast_to(np.asarray(mask.data).astype(bool, copy=False), addresses.shape)
            addresses, values = addresses[active], values[active]
        addresses, values = addresses.reshape(-1).view(np.int64), values.reshape(-1)
        order = np.argsort(addresses, kind="stable")
        addresses, values = addresses[order], values[order]
        shared = addresses[1:] == addresses[:-1]
        if not shared.any():
            return
        differ = values[1:] != values[:-1]
        if np.issubdtype(values.dtype, np.floating):
            differ &= ~(np.isnan(values[1:]) & np.isnan(values[:-1]))
        clash = np.flatnonzero(shared & differ)
        if clash.size:
            positions, _ = region.locate(addresses[clash[:1]], _access_bytes(pointers))
            code = (self.launch_index << 32) | _linear_program(interpreter.interpreter_builder.grid_idx, self.grid)
            region.buffer.race = (int(positions[0]), code, code)

    def _count_loads(self, region, addresses):
        """Count a wholly masked-off load toward the region's load budget: its lanes on the tensor's elements
        once per program, as loaded ones are; every other lane (past the end, in another tensor) each time."""
        offsets = addresses.view(np.int64) - region.storage_base
        positions = offsets // region.itemsize
        on_elements = (offsets % region.itemsize == 0) & (positions >= 0) & (positions < region.storage_numel)
        code = (self.launch_index << 32) | _linear_program(interpreter.interpreter_builder.grid_idx, self.grid)
        region.buffer.loads += int((~on_elements).sum()) + _newly_loaded(region.buffer, positions[on_elements], code,
                                                                         _load_site())

    def _crossing(self, buffer, positions, code):
        """Note the first element one program of this launch updates with an atomic over another's plain store: the
        atomic reads that value and stores what it makes of it, and on a GPU the two programs run at the same time,
        in any order (atomics by many programs are meant to share; a plain store is not). A load of what another
        program stored is not noted: its value may go unused (a wrapped or clamped lane whose store is masked off,
        the matmul tutorial's `rows % M`), and where it is used the shuffled order shows it; but a load of an input
        (which no program should store into) is: a program that used an input as scratch and put it back shows in
        no order, while on a GPU the others read it meanwhile."""
        others = buffer.stored_by[positions]
        crossing = (others != -1) & (others != code) & (others >> 32 == self.launch_index)
        if crossing.any():
            buffer.crossed = (int(positions[crossing][0]), int(others[crossing][0]), code)

    def _violation(self, access, region, addresses, positions, active, why=None, size=None):
        program = interpreter.interpreter_builder.grid_idx
        offsets = (addresses.astype(np.int64) - region.base) / region.itemsize
        in_storage = (positions >= 0) & (positions < region.storage_numel)
        if why is not None:
            reason = why()
        elif size is not None and size != region.itemsize:
            reason = (f"Each lane moves {size} bytes (its pointer's element type) where the tensor's elements are "
                      f"{region.itemsize}: these lanes' accesses reach past the tensor's elements or start where a "
                      f"GPU refuses them (an address not a multiple of {size}). Mask them, or keep the tensor's own "
                      "element type.")
        elif in_storage.all() and region.allowed is not None:
            reason = ("Those elements belong to the parent tensor but not to this view (a neighbouring "
                      "column or a gap between its elements): the kernel assumed contiguous memory. Compute "
                      "addresses from the stride arguments.")
        elif (offsets < 0).any():
            reason = "Offsets before the start of the tensor: check the sign and origin of your offsets."
        elif region.allowed is None and set(offsets.tolist()) == {region.numel}:
            reason = ("Exactly one element past the end: is the mask `offsets <= n` where it should be "
                      "`offsets < n`?")
        else:
            reason = ("Offsets past the end of the tensor: mask the lanes of the last block "
                      "(e.g. mask=offsets < n_elements) on every load and store.")
        # Only another view of the same allocation (a split): where separate tensors lie is the allocator's
        # choice, which differs from one process to the next and is another on a GPU.
        storage = region.buffer.parent.untyped_storage().data_ptr()
        others = [r.buffer.name for r in self.regions.values()
                  if r is not region and r.buffer.parent.untyped_storage().data_ptr() == storage and
                  any(r.spans(int(a)) for a in addresses[:64])]
        if others:
            reason += f" (That memory belongs to {', '.join(sorted(set(others)))}.)"
        return OutOfBounds(access, region, program, self.dims, offsets, len(addresses), active, reason)

    @contextmanager
    def installed(self):
        builder = interpreter.interpreter_builder
        originals = {}

        def replace(name, method):
            originals.setdefault(name, builder.__dict__.get(name))  # a name wrapped twice is restored once, whole
            setattr(builder, name, method)

        load, store = builder.create_masked_load, builder.create_masked_store
        rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas

        def checked_load(pointers, mask, other, *rest, **kwargs):
            self.check(pointers, mask, "load")
            if other is None and mask is not None:
                other = _undefined(pointers, self.zero_undefined)
                # Only floats differ between the two fills (NaN, 0); integers are 0 in both.
                self.undefined_loaded = self.undefined_loaded or (np.issubdtype(other.data.dtype, np.floating) and
                                                                  not np.asarray(mask.data).all())
            return load(pointers, mask, other, *rest, **kwargs)

        def checked_store(pointers, value, mask, *rest, **kwargs):
            self.check(pointers, mask, "store", value)
            if self.tags_pointers:
                self._lanes_agree(pointers, value, mask)
            return store(pointers, value, mask, *rest, **kwargs)

        def checked_rmw(op, pointers, value, mask, *rest, **kwargs):
            self.check(pointers, mask, "atomic")
            if self.tags_pointers and op == ATOMIC_XCHG:  # the last exchange stays, as the last store does
                self._lanes_agree(pointers, value, mask)
            return rmw(op, pointers, value, mask, *rest, **kwargs)

        def checked_cas(pointers, compare, value, *rest, **kwargs):
            self.check(pointers, None, "atomic")
            return cas(pointers, compare, value, *rest, **kwargs)

        def blind(method):
            def passing_over_nan(*args, **kwargs):
                self.passes_over_nan = True
                return method(*args, **kwargs)
            return passing_over_nan

        barrier = builder.create_barrier

        def counted_barrier(*args, **kwargs):
            self.barriers += 1
            return barrier(*args, **kwargs)

        replace("create_masked_load", checked_load)
        replace("create_masked_store", checked_store)
        replace("create_barrier", counted_barrier)
        replace("create_atomic_rmw", blind(checked_rmw))
        replace("create_atomic_cas", blind(checked_cas))
        for name in [n for n in dir(builder) if n in NAN_BLIND or n.startswith("create_fcmp")]:
            replace(name, blind(getattr(builder, name)))
        min_max = interpreter.ReduceOps.min_max  # tl.max, tl.min, tl.argmax, tl.argmin: NumPy's nanmax and the like
        interpreter.ReduceOps.min_max = blind(min_max)
        from . import interpret
        sort = interpret._sorted  # tl.sort, tl.topk: NumPy sorts NaN last, a GPU's 0 sorts among the values
        interpret._sorted = blind(sort)
        for name in POINTER_PROPAGATING if self.tags_pointers else ():
            if hasattr(builder, name):
                replace(name, _propagating(getattr(builder, name)))
        # tl.make_block_ptr (Triton before 3.9) and tl.make_tensor_descriptor compute a block's pointers from
        # their base when it is loaded or stored: those pointers carry the base's tag, and why they can go wrong.
        blocks = {handle: handle.materialize_pointers for handle in _BLOCK_HANDLES if self.tags_pointers}
        for handle, materialize in blocks.items():
            handle.materialize_pointers = _materialized_with_tag(materialize, _BLOCK_HANDLES[handle])
        try:
            yield self
        finally:
            interpreter.ReduceOps.min_max = min_max
            interpret._sorted = sort
            for handle, materialize in blocks.items():
                handle.materialize_pointers = materialize
            for name, original in originals.items():
                if original is None:
                    delattr(builder, name)
                else:
                    setattr(builder, name, original)


def _block_pointer_why(handle, boundary_check, *rest):
    starts = [int(offset.data.item()) for offset in handle.offsets]
    axes = [dim for dim, size in enumerate(handle.block_shape) if dim not in boundary_check and not (
        0 <= starts[dim] and starts[dim] + size <= int(handle.shape[dim].data.item()))]
    checked = tuple(boundary_check)
    if axes:
        return (f"The block pointer's block reaches past its shape on axis {' and '.join(map(str, axes))}, which "
                f"boundary_check={checked} leaves unchecked: list every axis a block can cross in boundary_check "
                "(padding_option then says what the lanes outside read).")
    return ("The block pointer's shape or strides describe more memory than the tensor has: give "
            "tl.make_block_ptr the tensor's own sizes and strides.")


def _descriptor_why(handle, *rest):
    return ("The tensor descriptor checks every block against the shape it was given, so that shape (or its "
            "strides) describes more memory than the tensor has: give tl.make_tensor_descriptor the tensor's own "
            "sizes and strides.")


_BLOCK_HANDLES = {getattr(interpreter, name): why
                  for name, why in (("BlockPointerHandle", _block_pointer_why), ("TensorDescHandle", _descriptor_why))
                  if hasattr(getattr(interpreter, name, None), "materialize_pointers")}


def _materialized_with_tag(materialize, why):
    def materialize_pointers(handle, *args, **kwargs):
        pointers, masks = materialize(handle, *args, **kwargs)
        tag = getattr(handle.base, TAG, None)
        if tag is not None:
            setattr(pointers, TAG, tag)
            setattr(pointers, WHY, lambda: why(handle, *args, **kwargs))  # worded only for a violation
        return pointers, masks
    return materialize_pointers


def _access_bytes(pointers):
    """The bytes each lane of an access through `pointers` moves: its pointer's element (a pointer's own 8 bytes
    for a pointer to pointers, a whole byte for booleans)."""
    return max(1, getattr(pointers.get_element_ty(), "primitive_bitwidth", 64) // 8)


# The interpreter's operations a NaN does not always spread through: a maximum or minimum passes over it, a
# comparison turns it into a plain false, a conversion or a bitcast into an integer, a libdevice call may test it.
# Where none ran, NaN in masked-off lanes and a GPU's 0 there give the same outputs.
NAN_BLIND = ("create_maxnumf", "create_minnumf", "create_clampf", "create_fp_to_si", "create_fp_to_ui",
             "create_bitcast", "create_extern_elementwise")


def _undefined(pointers, zero=False):
    """What masked-off lanes of a load without `other=` hold. Triton leaves them undefined; NVIDIA's compiler and
    the stock interpreter give 0. The grader gives NaN for floats, so that a kernel that computes with them fails
    here; with `zero`, 0, as a GPU runs it (a maximum passes over NaN, not over 0)."""
    element = pointers.get_element_ty()
    dtype = interpreter._get_np_dtype(element)
    fill = np.nan if np.issubdtype(dtype, np.floating) and not zero else 0
    return interpreter.TensorHandle(np.full(pointers.data.shape, fill, dtype=dtype), element)


def _propagating(method):
    def propagate(*args, **kwargs):
        result = method(*args, **kwargs)
        regions = set()
        for arg in args:
            regions |= {getattr(arg, TAG)} if getattr(arg, TAG, None) is not None else getattr(arg, MIXED, set())
        for handle in result if isinstance(result, tuple) else (result,):
            if len(regions) == 1:
                setattr(handle, TAG, next(iter(regions)))
            elif regions:  # mixes two arguments' pointers: checked against all of them, each access where it lands
                setattr(handle, MIXED, frozenset(regions))
        return result
    return propagate


def program_name(program, dims):
    """A program id as the student indexes it: 3 for a 1-D grid, (2, 0) for a 2-D one."""
    return program[0] if dims == 1 else tuple(program[:dims])


def _linear_program(program, grid):
    return program[0] + grid[0] * (program[1] + grid[1] * program[2])


def decode_program(code, launches):
    """(launch index, program id tuple) of a writer code recorded by the checker."""
    launch_index, linear = int(code) >> 32, int(code) & 0xFFFFFFFF
    grid = launches[launch_index].grid
    x, rest = linear % grid[0], linear // grid[0]
    return launch_index, (x, rest % grid[1], rest // grid[1])
