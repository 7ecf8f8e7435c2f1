"""Running a kernel by hand, to see what it does: `run()` launches it in the interpreter, all of its programs or
the ones chosen, with every load and store checked; `case()` gives a puzzle's case as the check made it.

A kernel launched by run() is plain Python to a debugger: `breakpoint()` in its body stops in pdb (or in
JupyterLab's debugger) once per program, with the program's blocks readable (pipeline/readable.py). A failing
check prints the two lines that bring its case back, with the program that went wrong (diagnose.replay_code).
"""
import bdb
import sys
from contextlib import contextmanager

from ..course import configuration_case_base, load_course


def run(kernel, grid, *args, programs=None, zero_undefined=False, **kwargs):
    """Launch `kernel[grid](*args, **kwargs)` on CPU tensors in the interpreter with every load and store
    checked: a lane out of bounds stops it with a message instead of corrupting memory or killing the
    notebook. What the kernel prints appears as it runs. Returns True when the launch completed.

    programs: only these programs run, in this order, e.g. programs=[3] or programs=[(1, 2)] for a 2-D grid;
    step through the one that goes wrong with breakpoint() in the kernel instead of every other one first.
    zero_undefined: the masked-off lanes of a load without other= hold 0, as on a GPU, instead of NaN.
    """
    import torch

    from ..course import TensorSpec
    from ..pipeline.cases import Buffer
    from ..pipeline.interpret import KernelCrashed, bind_arguments, interpreting, launch, python_function
    from ..pipeline.memcheck import MemoryChecker, OutOfBounds, Region, program_name

    fn = python_function(kernel)
    own = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    for name, given in (("programs", programs is not None), ("zero_undefined", zero_undefined)):
        if given and name in own:
            raise TypeError(f"{fn.__name__} has a parameter named `{name}`, which is also one of run()'s options: "
                            "pass the kernel's by position")
    try:
        arguments = bind_arguments(kernel, args, kwargs)
    except KernelCrashed as crash:  # a @triton.heuristics function raised, before any program ran
        print(f"the launch raised at line {crash.line}: {crash}")
        return False
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    full = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    everything = [(x, y, z) for x in range(full[0]) for y in range(full[1]) for z in range(full[2])]
    chosen = everything if programs is None else [_program(p, full, len(grid)) for p in programs]
    regions = {}
    for param, value in arguments.items():
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            parent = torch.empty(0, dtype=value.dtype).set_(storage, 0, (storage.nbytes() // value.element_size(),))
            positions = torch.arange(parent.numel()).as_strided(value.shape, value.stride(), value.storage_offset())
            # Any tensor may be stored into here: run() stops only at out-of-bounds accesses (no race is told).
            buffer = Buffer(TensorSpec(param, (), "inout", False), parent, [value], [positions])
            regions[param] = Region(buffer, 0, param)
    try:
        with interpreting(_kernel_namespaces(fn)), _breakpoints_stop():
            launch(kernel, arguments, full, chosen, MemoryChecker(regions, 0, full, len(grid), zero_undefined),
                   capture=False)
    except OutOfBounds as violation:
        program = program_name(violation.program, len(grid))
        print(f"stopped before an out-of-bounds access: {violation.message()}\nTo look at it: put breakpoint() "
              f"before that access and launch program {program} alone, with programs=[{program!r}].")
        return False
    except KernelCrashed as crash:
        print(f"program {program_name(crash.program, len(grid))} raised at line {crash.line}: {crash}")
        return False
    except bdb.BdbQuit:
        print("stopped in the debugger (q): the launch did not finish")
        return False
    return True


def _kernel_namespaces(fn):
    """The globals of the kernel's module and of the modules its @jit helpers are in (the notebook's, the .py files
    beside it it imports from), as the grader's worker interprets every module of a submission."""
    from triton.runtime.jit import JITFunction
    namespaces, seen, pending = [], set(), [fn.__globals__]
    while pending:
        namespace = pending.pop()
        if id(namespace) not in seen:
            seen.add(id(namespace))
            namespaces.append(namespace)
            pending += [value.fn.__globals__ for value in list(namespace.values()) if isinstance(value, JITFunction)]
    return namespaces


@contextmanager
def _breakpoints_stop():
    """breakpoint() in the kernel stops in a debugger. A Jupyter kernel hands breakpoint() to debugpy, which
    ignores it unless JupyterLab's debugger is on: then the visual debugger takes it, else IPython's pdb does."""
    hook = sys.breakpointhook
    debugpy = sys.modules.get("debugpy")
    if hook is sys.__breakpointhook__ or debugpy is None or debugpy.is_client_connected():
        yield
        return
    try:
        from IPython.core.debugger import set_trace
    except ImportError:
        from pdb import set_trace
    sys.breakpointhook = set_trace
    try:
        yield
    finally:
        sys.breakpointhook = hook


def _program(program, grid, dims):
    """A chosen program as the (x, y, z) the interpreter runs: 3 or (3,) for a 1-D grid, (1, 2) for a 2-D one."""
    ids = (program,) if isinstance(program, int) else tuple(program)
    if not 1 <= len(ids) <= 3 or not all(isinstance(i, int) for i in ids):
        raise ValueError(f"programs=[...] lists program ids such as 3 or (1, 2), not {program!r}")
    ids = ids + (0,) * (3 - len(ids))
    if any(not 0 <= i < n for i, n in zip(ids, grid)):
        raise ValueError(f"program {program!r} is not in the grid {grid[:dims]}: ids go from 0 to the grid's size - 1")
    return ids


def case(puzzle_id, name, launch=0, seed=0, course=None):
    """The tensors of a puzzle's case (named, or by its index), in the puzzle's order, exactly as the check
    made them with this seed (outputs filled with NaN: an element never written shows). `launch`: for a case
    of several launches (the split layout), the views that launch receives."""
    from ..pipeline.cases import make_case

    course = course or load_course()
    puzzle = course.puzzle(puzzle_id)
    names = [spec.name for spec in puzzle.cases]
    if isinstance(name, int):
        index = name
    elif name in names:
        index = names.index(name)
    elif configuration_case_base(name) in names:  # a case again at a configuration's blocks: the same tensors
        index = names.index(configuration_case_base(name))
    else:
        raise ValueError(f"{puzzle_id} has no case {name!r}; its cases are: {', '.join(map(repr, names))}")
    made = make_case(puzzle, index, seed)
    views = made.launches[launch].views
    return tuple(views[tensor.name] for tensor in puzzle.tensors)
