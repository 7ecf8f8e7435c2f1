"""Build the tensors of one case: layouts, NaN-filled outputs, the launches and the expected result.

Every tensor lives in a flat parent storage. The kernel sees views of it (one view per launch: the
split layout launches once per piece), and `positions` maps each view element to its place in the
parent, so that comparing, checking memory and reporting all work on the same indices.
"""
import zlib
from dataclasses import dataclass, field

import numpy as np
import torch

DTYPES = {"float32": torch.float32, "float16": torch.float16}
# An output element still holding this exact NaN was never written by the kernel.
UNWRITTEN_BITS = {torch.float32: (torch.int32, 0x7FC0BEEF), torch.float16: (torch.int16, 0x7E5B)}
STORAGE_OFFSET = 5  # elements before the view in the `offset` layout


def other_garbage(buffer, seed):
    """The output's parents with other garbage where its views are (the rest as it is), for the runs again of a case
    whose kernel read output elements before storing them: zeros throughout (a fresh allocation's, and what a test
    of a whole block meets), then each element drawn from `seed` (the case's, secret in a class) among what a GPU's
    memory holds: zeros, small values, whole numbers, and any bits at all (of every magnitude, infinities and NaNs
    among them). A kernel whose stored values depend on the garbage stores other values; one that reads it and
    never uses it stores the same."""
    generator = torch.Generator().manual_seed(seed + 1)
    count = buffer.parent.numel()
    kinds = torch.randint(0, 4, (count,), generator=generator)
    values = torch.randn(count, generator=generator, dtype=torch.float64).to(buffer.parent.dtype)
    bits_type, _ = UNWRITTEN_BITS[buffer.parent.dtype]
    info = torch.iinfo(bits_type)
    bits = torch.randint(info.min, info.max, (count,), generator=generator, dtype=torch.int64).to(bits_type)
    garbage = torch.where(kinds == 0, torch.zeros_like(values), torch.where(kinds == 1, values, torch.where(
        kinds == 2, values.mul(100).round(), bits.view(buffer.parent.dtype))))
    parents = [buffer.parent.clone(), buffer.parent.clone()]
    for view, positions in zip(buffer.views, buffer.positions):
        parents[0].as_strided(view.shape, view.stride(), view.storage_offset()).zero_()
        parents[1].as_strided(view.shape, view.stride(), view.storage_offset()).copy_(garbage[positions])
    return parents


def unwritten_fill(shape, dtype):
    int_dtype, bits = UNWRITTEN_BITS[dtype]
    return torch.full(shape, bits, dtype=int_dtype).view(dtype)


def is_unwritten(values):
    int_dtype, bits = UNWRITTEN_BITS[values.dtype]
    return values.view(int_dtype) == bits


@dataclass
class Buffer:
    """One tensor of the puzzle in one case: its parent storage and what the kernel sees of it."""
    spec: object  # TensorSpec
    parent: torch.Tensor  # flat, owns the storage
    views: list  # the view passed to each launch
    positions: list  # per view: parent index of each element (int64, shaped like the view)
    original: torch.Tensor = None  # the parent before the kernel ran
    writers: np.ndarray = None  # per parent element: which program stored it last (-1: none)
    readers: np.ndarray = None  # per parent element: which program loaded it last (-1: none)
    race: tuple = None  # the first element two programs of one launch stored: (position, first, second)
    # The most times one element was stored again, each by another program of its launch, with the value it held
    repeated: int = 0
    stored_again: np.ndarray = None  # per parent element: how many times (the worker's count, never sent)
    # The first element one program of a launch updated with an atomic over another's plain store:
    # (position, the storing program, the updating one)
    crossed: tuple = None
    stored_by: np.ndarray = None  # per parent element: which program last stored it with a plain tl.store (-1: none)
    # Per parent element, of that store: the lane that stored it, the shape of its block, the barriers run before it
    stored_lane: np.ndarray = None
    stored_block: np.ndarray = None
    stored_epoch: np.ndarray = None
    # The first element a lane of a program loaded that another lane of it stored, no barrier between:
    # (position, the program, the storing lane, the loading lane)
    lane_race: tuple = None
    read_unwritten: tuple = None  # the first element loaded or atomically updated before any store: (position, reader)
    # Elements loaded through it: each once per program, and again each time the same load (the same line of the
    # kernel, called the same way) loads it again in that program: a second sweep over the same tiles elsewhere in
    # the kernel (two-pass softmax) is not counted, nor one second sweep of the same load that repeats its first
    # load for load (the two passes written as one loop body run twice); a loop that loads tiles it already has
    # (clamped addresses) is.
    # A load whose every lane is masked off counts its lanes all the same (it still runs).
    loads: int = 0
    counted_by: np.ndarray = None  # per parent element: the last program whose loads counted it (-1: none)
    loaded_at: dict = field(default_factory=dict)  # load site -> per parent element: the last program it loaded it
    sweeps: dict = field(default_factory=dict)  # load site -> [memcheck.SiteSweeps of each program that used it]
    refilled: tuple = ()  # the parent after each run of the case again with other_garbage in the output
    refill_failed: bool = False  # one of those runs ended in an error (out of bounds, a crash) where the first did not
    # The parent after the case ran again with 0 in the masked-off lanes of loads without other= (NaN the first
    # time), as a GPU fills them; None when no such lane was loaded.
    zero_filled: object = None
    zero_fill_failed: bool = False  # that run ended in an error

    def __post_init__(self):
        for tracker in ("writers", "readers", "stored_by", "counted_by", "stored_lane", "stored_block",
                        "stored_epoch"):  # nobody has stored or loaded an element yet
            if getattr(self, tracker) is None:
                setattr(self, tracker, np.full(self.parent.numel(), -1, dtype=np.int64))

    @property
    def name(self):
        return self.spec.name

    def view_positions(self):
        """Parent indices covered by the views, sorted."""
        return np.unique(np.concatenate([p.reshape(-1).numpy() for p in self.positions]))

    def locate(self, position):
        """(launch index, index within the view) of a parent position, or None outside every view."""
        for launch_index, positions in enumerate(self.positions):
            found = (positions == position).nonzero()
            if len(found):
                return launch_index, tuple(int(i) for i in found[0])
        return None

    def describe_view(self, launch_index=0):
        view = self.views[launch_index]
        return f"shape {tuple(view.shape)}, stride {tuple(view.stride())}, storage offset {view.storage_offset()}"


@dataclass
class Launch:
    symbols: dict  # sizes and blocks as this launch sees them
    views: dict  # tensor name -> view
    args: list  # in kernel parameter order
    grid: tuple  # always 3-D
    dims: int  # dimensions of the grid as the puzzle declares it

    @property
    def programs(self):
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass
class Case:
    """The tensors, launches and expected parents of one case of a puzzle."""
    puzzle: object
    spec: object  # CaseSpec
    index: int
    seed: int
    buffers: dict = field(default_factory=dict)
    launches: list = field(default_factory=list)
    expected: dict = field(default_factory=dict)  # written tensor name -> expected flat parent
    # The kernel's own parameters the case ran with, as a tuning configuration after the first gives them (the
    # first's are the rebuilt kernel's defaults): {} for that first run
    constants: dict = field(default_factory=dict)

    @property
    def name(self):
        return self.spec.name

    def program_order(self, launch, order=None):
        """The program ids of a launch in the order they run: the case's own order unless `order` is given."""
        programs = [(x, y, z) for x in range(launch.grid[0]) for y in range(launch.grid[1])
                    for z in range(launch.grid[2])]
        if (order or self.spec.order) == "shuffled":
            rng = np.random.default_rng(self.seed)
            programs = [programs[i] for i in rng.permutation(len(programs))]
        return programs

    def __repr__(self):
        return f"Case({self.puzzle.id}/{self.name!r}: {self.spec.describe()})"


def make_cases(puzzle, seed=0):
    return [make_case(puzzle, index, seed) for index in range(len(puzzle.cases))]


def make_case(puzzle, index, seed=0):
    spec = puzzle.cases[index]
    case_seed = zlib.crc32(f"{puzzle.id}/{index if spec.inputs_of is None else spec.inputs_of}/{seed}".encode())
    case = Case(puzzle, spec, index, case_seed)
    generator = torch.Generator().manual_seed(case_seed)
    dtype = DTYPES[spec.dtype]
    for tensor in puzzle.tensors:
        case.buffers[tensor.name] = _make_buffer(tensor, spec, dtype, generator)
    for tensor in puzzle.tensors:
        if tensor.init is not None:
            _derive(tensor, case.buffers, spec.symbols)
    for launch_index in range(len(next(iter(case.buffers.values())).views) if spec.layout == "split" else 1):
        case.launches.append(_make_launch(puzzle, spec, case.buffers, launch_index))
    case.expected = _expected(puzzle, case)
    for buffer in case.buffers.values():
        buffer.original = buffer.parent.clone()
    return case


ROW_PADDING = 8  # extra elements after each row (`padded_rows`), extra rows after each matrix (`padded_planes`)


def _make_buffer(tensor, spec, dtype, generator):
    shape = tensor.shape_at(spec.symbols)
    dtype = DTYPES[tensor.dtype] if tensor.dtype else dtype
    numel = int(np.prod(shape))
    layout = spec.layout if tensor.strided and tensor.name not in spec.contiguous else "contiguous"
    *outer, rows, columns = (1,) + shape if len(shape) == 1 else shape
    if layout == "every_other_column":
        parent = torch.empty(numel * 2, dtype=dtype)
        views = [parent.view(*outer, rows, columns * 2)[..., ::2]]
    elif layout == "padded_rows":
        parent = torch.empty(numel // columns * (columns + ROW_PADDING), dtype=dtype)
        views = [parent.view(*outer, rows, columns + ROW_PADDING)[..., :columns]]
    elif layout == "padded_planes":
        parent = torch.empty(numel // rows * (rows + ROW_PADDING), dtype=dtype)
        views = [parent.view(*outer, rows + ROW_PADDING, columns)[..., :rows, :]]
    elif layout == "transposed":
        parent = torch.empty(numel, dtype=dtype)
        views = [parent.view(*outer, columns, rows).transpose(-1, -2)]
    elif layout == "transposed_every_other_column":
        parent = torch.empty(numel * 2, dtype=dtype)
        views = [parent.view(*outer, columns, rows * 2)[..., ::2].transpose(-1, -2)]
    elif layout == "offset":
        parent = torch.empty(STORAGE_OFFSET + numel, dtype=dtype)
        views = [parent[STORAGE_OFFSET:].view(shape)]
    elif layout == "split":
        parent = torch.empty(numel, dtype=dtype)
        views = list(torch.split(parent.view(shape), list(spec.split), dim=-1))
    else:
        parent = torch.empty(numel, dtype=dtype)
        views = [parent.view(shape)]
    values = spec.inputs.get(tensor.name, {"scale": 1.0, "offset": 0.0})
    random = torch.randn(parent.numel(), generator=generator, dtype=torch.float64)
    parent.copy_((random * values["scale"] + values["offset"]).to(dtype))
    index = torch.arange(parent.numel())
    positions = [index.as_strided(v.shape, v.stride(), v.storage_offset()) for v in views]
    if tensor.role == "output":
        for view in views:
            view.copy_(unwritten_fill(view.shape, dtype))
    return Buffer(tensor, parent, views, positions)


def _derive(tensor, buffers, symbols):
    """Fill an input computed from the other inputs (in float64, then rounded to its dtype)."""
    buffer = buffers[tensor.name]
    namespace = dict(symbols)
    namespace.update({name: b.views[0].double() for name, b in buffers.items() if b.spec.init is None})
    value = tensor.init(namespace)
    for view in buffer.views:
        view.copy_(value.to(view.dtype))


def _make_launch(puzzle, spec, buffers, launch_index):
    views = {name: b.views[launch_index if len(b.views) > 1 else 0] for name, b in buffers.items()}
    symbols = dict(spec.symbols)
    for tensor in puzzle.tensors:  # a split piece has its own width
        for dim, symbol in zip(views[tensor.name].shape, tensor.shape):
            if isinstance(symbol, str) and tensor.strided:
                symbols[symbol] = dim
    namespace = {**symbols, **views}
    args = [expression(namespace) for expression in puzzle.args.values()]
    grid = tuple(int(g(namespace)) for g in puzzle.grid)
    return Launch(symbols, views, args, grid + (1,) * (3 - len(grid)), len(grid))


def _expected(puzzle, case):
    """Run the reference in float64 on each launch's views, in launch order, on copies."""
    state = {name: b.parent.double() for name, b in case.buffers.items()}
    expected = {name: b.parent.clone() for name, b in case.buffers.items() if b.spec.written}
    written = [t for t in puzzle.tensors if t.written]
    for launch_index in range(len(case.launches)):
        inputs = {}
        for tensor in puzzle.tensors:
            if tensor.role in ("input", "inout") and tensor.init is None:
                buffer = case.buffers[tensor.name]
                view = buffer.views[launch_index if len(buffer.views) > 1 else 0]
                inputs[tensor.name] = state[tensor.name].as_strided(
                    view.shape, view.stride(), view.storage_offset()).clone()
        results = puzzle.reference(**inputs)
        results = results if isinstance(results, tuple) else (results,)
        if len(results) != len(written):
            raise RuntimeError(f"{puzzle.id}: the reference returned {len(results)} tensors for the "
                               f"{len(written)} output and inout tensors ({', '.join(t.name for t in written)})")
        for tensor, result in zip(written, results):
            buffer = case.buffers[tensor.name]
            positions = buffer.positions[launch_index if len(buffer.positions) > 1 else 0]
            if tuple(result.shape) != tuple(positions.shape):
                raise RuntimeError(f"{puzzle.id}: the reference returned shape {tuple(result.shape)} for "
                                   f"{tensor.name}, whose view has shape {tuple(positions.shape)}")
            expected[tensor.name][positions.reshape(-1)] = result.reshape(-1).to(buffer.parent.dtype)
            state[tensor.name][positions.reshape(-1)] = result.reshape(-1).double()
    return expected
