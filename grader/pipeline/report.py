"""Render a GradeReport: a readable table with the diagnostics of what failed, or JSON for tools."""
import json

from .performance import summary

FAILING_CASES_SHOWN = 3


def to_json(report):
    return json.dumps(report.to_dict(), indent=2)


def to_text(report, title=""):
    lines = [title, ""] if title else []
    rows = [("#", "puzzle", "status", "points", "cases")]
    for number, puzzle in enumerate(report.puzzles, start=1):
        passed = sum(c.status == "pass" for c in puzzle.cases)
        cases = f"{passed}/{len(puzzle.cases)}" if puzzle.cases else "-"
        status = puzzle.status if puzzle.status == "pass" else puzzle.status.upper()
        rows.append((str(number), puzzle.id, status, f"{_points(puzzle.points)}/{_points(puzzle.max_points)}", cases))
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    for puzzle in report.puzzles:
        if puzzle.status not in ("pass", "missing"):
            lines += [""] + _puzzle_details(puzzle)
    estimated = [p for p in report.puzzles if p.performance]
    if estimated:
        lines += ["", "How fast would it be? (estimated on the CPU; `triton-course bench` measures it on a GPU)"]
        for puzzle in estimated:
            lines += [f"{puzzle.id}: " + "\n".join(summary(puzzle.performance))]
    noted = [p for p in report.puzzles if p.notes]
    if noted:
        lines += [""] + [f"{p.id}: {note}" for p in noted for note in p.notes]
    missing = [p for p in report.puzzles if p.status == "missing"]
    if missing:
        lines += ["", f"No kernel found for: {', '.join(p.id for p in missing)} (kernels are looked up by name; "
                      "`triton-course list` gives each puzzle's kernel)."]
        unread = dict.fromkeys(d.message for p in missing for d in p.diagnostics if d.kind == "load_error")
        lines += [line for message in unread for line in _indent(message, "  ")]
    lines += ["", f"Total: {_points(report.points)}/{_points(report.max_points)} points"]
    if report.isolation:
        lines.append(f"Kernels ran sandboxed by {report.isolation}.")
    return "\n".join(lines)


REPLAY_INTRO = ("To watch it go wrong, put breakpoint() (or print) in the kernel and run this in a cell "
                "(from grader.notebook import case, run):")


def puzzle_text(puzzle):
    """One puzzle: a line per case, then what went wrong."""
    lines = [f"{puzzle.id}: {puzzle.title} - {puzzle.status.upper()}, "
             f"{_points(puzzle.points)}/{_points(puzzle.max_points)} points"]
    width = max((len(c.name) for c in puzzle.cases), default=0)
    lines += [f"  {c.status:4}  {c.name.ljust(width)}  {c.description}" for c in puzzle.cases]
    lines += [f"  note: {note}" for note in puzzle.notes]
    if puzzle.performance:
        lines += ["  how fast would it be? " + summary(puzzle.performance)[0]]
        lines += ["  " + line for line in summary(puzzle.performance)[1:]]
    if puzzle.status != "pass":
        lines += [""] + _puzzle_details(puzzle)[1:]
    return "\n".join(lines)


def _puzzle_details(puzzle):
    source = f" (graded from {puzzle.source})" if puzzle.source else ""
    lines = [f"{puzzle.id}: {puzzle.title} - {puzzle.status.upper()}{source}"]
    failing = [c for c in puzzle.cases if c.status != "pass"]
    for case in failing[:FAILING_CASES_SHOWN]:
        lines.append(f"  case '{case.name}': {case.description}")
        for diagnostic in case.diagnostics:
            lines += _indent(f"{diagnostic.kind}: {diagnostic.message}", "    ")
        if case.replay and case is failing[0]:
            lines += ["    " + REPLAY_INTRO] + _indent(case.replay, "        ")
    if len(failing) > FAILING_CASES_SHOWN:
        more = ", ".join(f"'{c.name}'" for c in failing[FAILING_CASES_SHOWN:])
        lines.append(f"  {len(failing) - FAILING_CASES_SHOWN} more failing cases: {more} (--json lists them all)")
    for diagnostic in puzzle.diagnostics:
        if diagnostic.case is None:  # the puzzle-level ones: the cases above already show theirs
            lines += _indent(f"{diagnostic.kind}: {diagnostic.message}", "  ")
    return lines


def _indent(text, prefix):
    return [prefix + line for line in text.splitlines()]


def _points(value):
    return f"{value:g}"
