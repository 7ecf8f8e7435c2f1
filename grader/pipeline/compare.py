"""Compare what the kernel left in memory with the reference, in pytest's shape of a mismatch report."""
import numpy as np
import torch

from .cases import is_unwritten
from .memcheck import decode_program, program_name
from .results import Diagnostic
from ..settings import DEFAULT

_BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(tensor):
    return tensor.view(_BITS[tensor.element_size()])


def compare(case, settings=DEFAULT):
    """Diagnostics for one case after the kernel ran; empty when everything is right."""
    diagnostics = []
    for buffer in case.buffers.values():
        changed = (_bits(buffer.parent) != _bits(buffer.original)).numpy()
        in_view = np.zeros(buffer.parent.numel(), dtype=bool)
        in_view[buffer.view_positions()] = True
        if buffer.spec.role == "input":
            if changed.any():
                diagnostics.append(_modified(case, buffer, changed, "input_modified",
                                             "is an input but the kernel changed it"))
            elif buffer.crossed is not None:  # stored into and put back (memcheck: _crossing)
                position, first, second = buffer.crossed
                diagnostics.append(Diagnostic("race", (
                    f"{buffer.name} is an input, and {_program(case, first)} stored into {_where(buffer, position)}, "
                    f"which {_program(case, second)} of the same launch then read. On a GPU programs run at the "
                    "same time: the others read the input while it holds what was stored there, whatever is put "
                    "back afterwards. Leave inputs as they are: keep a program's own values in registers, or in "
                    "elements of an output that only it uses."), case.name, _blamed(case, first)))
            continue
        if (changed & ~in_view).any():
            diagnostics.append(_modified(case, buffer, changed & ~in_view, "outside_write",
                                         "was changed outside the view the kernel was given"))
        if buffer.race is not None and buffer.race[1] == buffer.race[2]:
            position, program, _ = buffer.race
            diagnostics.append(Diagnostic("race", (
                f"{buffer.name}: two lanes of one tl.store (or tl.atomic_xchg) in {_program(case, program)} wrote "
                f"different values to "
                f"{_where(buffer, position)}. The interpreter keeps the last lane's value; a GPU keeps any one of "
                "them. Store each element from one lane only: reduce first (tl.sum, tl.max) and store the result, "
                "or mask the store to the lane whose value is meant."), case.name, _blamed(case, program)))
        elif buffer.race is not None:
            position, first, second = buffer.race
            diagnostics.append(Diagnostic("race", (
                f"{buffer.name}: {_where(buffer, position)} was stored by {_program(case, first)} and again by "
                f"{_program(case, second)}. Each element must be stored by exactly one program: on a GPU programs "
                "run at the same time and the last store wins, and a program that does the whole job repeats "
                "the work of every other program."), case.name, _blamed(case, second)))
        elif buffer.repeated >= 2 ** max(view.dim() for view in buffer.views):
            # Tiles that overlap at an edge store an element at most once a tile that covers it, one or two along
            # each axis, the same value each time: harmless on a GPU. More is a program repeating another's work.
            most = 2 ** max(view.dim() for view in buffer.views)
            diagnostics.append(Diagnostic("race", (
                f"{buffer.name}: an element was stored {1 + buffer.repeated} times, by as many programs of one "
                "launch, the same value each time: programs repeat work that another one does (tiles that overlap "
                f"at an edge store an element at most {most} times). Let each program compute and store its own "
                "part of the output."), case.name))
        if buffer.lane_race is not None:
            position, program, stored, loaded = buffer.lane_race
            diagnostics.append(Diagnostic("race", (
                f"{buffer.name}: in {_program(case, program)}, lane {loaded} of a load read {_where(buffer, position)}, "
                f"which lane {stored} of a store of the same program had stored, with no tl.debug_barrier() between. "
                "On a GPU a program's lanes are threads in several warps, each at its own pace: the load may come "
                "before the store. Keep the values in registers (tl.flip, tl.reshape, tl.trans move them between "
                "lanes), or put a tl.debug_barrier() between the store and the load."),
                case.name, _blamed(case, program)))
        if buffer.crossed is not None:
            position, first, second = buffer.crossed
            diagnostics.append(Diagnostic("race", (
                f"{buffer.name}: {_program(case, second)} updated {_where(buffer, position)} with an atomic, over "
                f"what {_program(case, first)} of the same launch had stored there. On a GPU programs run at the "
                "same time and in any order: the atomic may come before the store, which then wipes it out (here "
                "it came after). No program may build on what another stores in the same launch: each stores "
                "only its own part of the output, or every program adds into it with atomics."),
                case.name, _blamed(case, second)))
        diagnostics += _check_written(case, buffer, settings)
    for name, expression in case.puzzle.load_budget.items():
        budget, loads = expression(dict(case.spec.symbols)), case.buffers[name].loads
        if loads > budget:
            diagnostics.append(Diagnostic("excess_loads", (
                f"{name}: the programs loaded {loads} elements of it (each once a program, and again where the "
                f"same load loads it again), but "
                f"a kernel that skips what it does not need loads at most {budget:.0f} here "
                f"({case.puzzle.load_budget[name].source}). Right values are not enough: do not load blocks whose "
                "every lane is masked out, or that no row of the program needs."), case.name))
    return diagnostics


def _check_written(case, buffer, settings):
    tolerance = case.puzzle.tolerances[case.spec.dtype]
    positions = buffer.view_positions()
    got = buffer.parent[positions]
    expected = case.expected[buffer.name][positions]
    stored = buffer.writers[positions] != -1
    if not stored.any():
        return [Diagnostic("unwritten_output", (
            f"{buffer.name}: the kernel stored nothing at all into it (no program wrote a single one of its "
            f"{len(positions)} elements). Is the kernel body still the skeleton's `pass`? Every element must be "
            "stored by some program with tl.store."), case.name)]
    never_stored = is_unwritten(got).numpy() & ~stored
    close = torch.isclose(got.double(), expected.double(), atol=tolerance.atol, rtol=tolerance.rtol,
                          equal_nan=True).numpy()
    diagnostics = []
    if never_stored.any():
        first = positions[never_stored][0]
        diagnostics.append(Diagnostic("unwritten_output", (
            f"{buffer.name}: {int(never_stored.sum())} of {len(positions)} elements were never written, the first "
            f"at {_where(buffer, first)}. No program stored to them: the grid and the offsets must cover every "
            f"element, and the store mask must only exclude lanes past the end."
            + (" Other elements were stored by more than one program, the same value each time: programs that "
               "compute the same tile, where each should find its own (the program id to tile mapping)."
               if buffer.repeated else "")), case.name))
    wrong = ~close & ~never_stored
    # An output read before it was stored: the case ran again with other garbage in it, twice (cases.other_garbage). Where
    # the stored values changed, they depend on what the memory held, right or not; where they did not, the read
    # was never used (and the values, right or wrong, are the kernel's own).
    depends = None
    if buffer.spec.role == "output" and buffer.read_unwritten is not None and buffer.refilled:
        depends = buffer.refill_failed or any(
            bool((stored & ~torch.eq(got, again).numpy() & ~(got.isnan() & again.isnan()).numpy()).any())
            for again in (parent[positions] for parent in buffer.refilled))
    if buffer.spec.role == "output" and buffer.read_unwritten is not None and (depends or depends is None and
                                                                               wrong.any()):
        position, reader = buffer.read_unwritten
        diagnostics.append(Diagnostic("read_before_write", (
            f"{buffer.name}: {_program(case, reader)} read {_where(buffer, position)} before any program stored it "
            "(a tl.load, or an atomic such as tl.atomic_add, which reads the old value)"
            + (", and what it does depends on it: run again with other garbage in the output, the kernel "
               + ("failed. " if buffer.refill_failed else "stored other values. ") if depends else ". ") +
            "An output starts as whatever its memory held: garbage on a GPU (the caller's torch.empty), NaN here. "
            "Store every element before reading it back, or accumulate in registers and store once; a kernel that "
            "adds into its output with atomics needs the caller to zero it, which this puzzle's caller does not."),
            case.name, _blamed(case, reader)))
    if wrong.any():
        report = _mismatch_report(case, buffer, positions, got, expected, wrong, tolerance, settings)
        nonfinite = wrong & ~torch.isfinite(got.double()).numpy() & torch.isfinite(expected.double()).numpy()
        if nonfinite.any():
            diagnostics.append(Diagnostic("nonfinite", (
                f"{buffer.name}: {int(nonfinite.sum())} elements are inf or NaN where the reference is finite, the "
                f"first at {_where(buffer, positions[nonfinite][0])}. Look for an overflow (exp overflows above "
                "88 in float32: subtract the maximum first), a division by zero, an inf - inf, or masked lanes "
                "loaded without other= taking part in the arithmetic (they are undefined on a GPU; the grader "
                "makes them NaN).\n" + report), case.name,
                _blamed(case, buffer.writers[int(positions[nonfinite][0])])))
        else:
            diagnostics.append(Diagnostic("mismatch", report, case.name,
                                          _blamed(case, buffer.writers[int(positions[wrong][0])])))
    if not diagnostics and buffer.zero_filled is not None:
        diagnostics += _needs_undefined_lanes(case, buffer, positions, expected, stored, tolerance, settings)
    return diagnostics


def _needs_undefined_lanes(case, buffer, positions, expected, stored, tolerance, settings):
    """The case passed with NaN in the masked-off lanes of its loads without other=; with 0 there, as a GPU runs it
    (cases.Buffer.zero_filled), is it still right?"""
    again = buffer.zero_filled[positions]
    wrong = ~torch.isclose(again.double(), expected.double(), atol=tolerance.atol, rtol=tolerance.rtol,
                           equal_nan=True).numpy() & stored
    if not (buffer.zero_fill_failed or wrong.any()):
        return []
    what = (" the kernel failed (an error, or an access out of bounds).\n" if buffer.zero_fill_failed else
            ":\n" + _mismatch_report(case, buffer, positions, again, expected, wrong, tolerance, settings) + "\n")
    first = int(positions[wrong][0]) if wrong.any() else int(positions[stored][0])
    return [Diagnostic("undefined_lanes", (
        f"{buffer.name}: right here, wrong on a GPU. The masked-off lanes of a tl.load without other= are "
        "undefined in Triton: NVIDIA's compiler leaves 0 in them, the grader put NaN there, and with 0 there"
        f"{what}A maximum or a minimum taken over those lanes is the usual cause: tl.max and tl.maximum pass "
        "over a NaN, not over a 0, which wins a row of negative numbers. Give the load the other= that leaves "
        "the result unchanged (float('-inf') before a maximum, 0.0 before a sum), or mask with tl.where before "
        "reducing."), case.name, _blamed(case, buffer.writers[first]))]


def _mismatch_report(case, buffer, positions, got, expected, wrong, tolerance, settings):
    got64, expected64 = got.double()[wrong], expected.double()[wrong]
    abs_error = (got64 - expected64).abs()
    rel_error = abs_error / expected64.abs().clamp_min(torch.finfo(torch.float64).tiny)
    lines = [f"{buffer.name}: {int(wrong.sum())} of {len(positions)} elements are wrong "
             f"({100 * wrong.mean():.1f}%); max abs error {_number(abs_error.nan_to_num(float('inf')).max())}, "
             f"max rel error {_number(rel_error.nan_to_num(float('inf')).max())} "
             f"({case.spec.dtype}: atol {tolerance.atol:g}, rtol {tolerance.rtol:g})"]
    rows = [("index", "got", "expected", "stored by")]
    wrong_positions = positions[wrong]
    for i in range(min(settings.mismatch_rows, len(wrong_positions))):
        rows.append((_where(buffer, wrong_positions[i]), _number(got64[i]), _number(expected64[i]),
                     _writer(case, buffer, wrong_positions[i])))
    widths = [max(len(row[c]) for row in rows) for c in range(4)]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    if len(wrong_positions) > settings.mismatch_rows:
        lines.append(f"  ({settings.mismatch_rows} of {len(wrong_positions)} wrong elements shown; --json has the "
                     "same report for tools)")
    return "\n".join(lines)


def _modified(case, buffer, changed, kind, what):
    first = int(np.flatnonzero(changed)[0])
    return Diagnostic(kind, (
        f"{buffer.name} {what}: {int(changed.sum())} elements differ, the first at {_where(buffer, first)} "
        f"(was {_number(buffer.original[first])}, now {_number(buffer.parent[first])}), "
        f"{_writer(case, buffer, first)}."), case.name, _blamed(case, buffer.writers[first]))


def _where(buffer, position):
    located = buffer.locate(int(position))
    if located is None:
        return f"parent element {int(position)}, outside the view ({buffer.describe_view()})"
    launch_index, index = located
    piece = f" of piece {launch_index + 1}" if len(buffer.views) > 1 else ""
    return f"index {index if len(index) > 1 else '(' + str(index[0]) + ',)'}{piece}"


def _writer(case, buffer, position):
    code = buffer.writers[int(position)]
    return "never stored" if code < 0 else _program(case, code)


def _blamed(case, code):
    """(launch index, program) of a writer code, for Diagnostic.program; None when no program wrote."""
    return None if code < 0 else decode_program(code, case.launches)


def _program(case, code):
    launch_index, program = decode_program(code, case.launches)
    program = program_name(program, case.launches[launch_index].dims)
    piece = f" (launch {launch_index + 1})" if len(case.launches) > 1 else ""
    return f"program {program}{piece}"


def _number(value):
    value = float(value)
    return "nan" if value != value else f"{value:.6g}"
