"""What a puzzle notebook's check cell calls: `check(puzzle_id, kernel)` grades the kernel defined in the
notebook; `grade` is the same for an nbgrader test cell.

In a Jupyter kernel the result is HTML (feedback.py): a row per case, the diagnostics, and pictures of
which program touched which element; elsewhere it is text.
"""
import threading
import warnings
from dataclasses import replace

import numpy as np

from ..course import load_course
from ..pipeline.grade import estimate_source, grade_loaded, load_kernel
from ..pipeline.performance import known_gpu, unavailable
from ..pipeline.report import puzzle_text
from ..settings import DEFAULT

EARLY_PUZZLES = 3  # the puzzles whose failures always come with a picture of the memory accesses


def _display():
    """IPython's display functions in a Jupyter kernel, or None."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return None
    shell = get_ipython()
    return (display, HTML) if shell is not None and getattr(shell, "kernel", None) is not None else None


def check(puzzle_id, kernel, seed=0, course=None, picture=False, performance=True, gpu=DEFAULT.estimate_gpu):
    """Grade `kernel` on every case of the puzzle in a sandboxed worker; show what happened; return the result.

    picture=True draws which program touched which element for the first case even when it passes.
    performance=True estimates, for a passing kernel of a puzzle with a GPU benchmark, how fast it would run on
    `gpu` ("H100", "H200" or "A100"). In a Jupyter kernel the verdict is shown (and check returns) as soon as the
    cases are graded, and the estimate joins it when it comes, from a worker of its own: result.performance is
    None until then.
    """
    settings = replace(DEFAULT, estimate_gpu=known_gpu(gpu))
    course = course or load_course()
    try:
        puzzle = course.puzzle(puzzle_id)
    except KeyError as error:  # a misspelt id: the message says which ids there are, a traceback would not help
        raise ValueError(f"check({puzzle_id!r}, ...): {error.args[0]}") from None
    early = [p.id for p in course.puzzles[:EARLY_PUZZLES]]
    pictures = "all" if picture else "failures" if puzzle_id in early else None
    shown = _display()
    handle = None
    if shown:
        display, HTML = shown
        handle = display(HTML(f"<i>checking {puzzle.title}: {len(puzzle.cases)} cases...</i>"), display_id=True)

    def progress(_, done):
        if handle:
            handle.update(HTML(f"<i>checking {puzzle.title}: case {done} of {len(puzzle.cases)} done...</i>"))

    later = bool(handle and performance and puzzle.benchmark is not None)
    with warnings.catch_warnings():  # a test cell with anything on stderr scores 0 under nbgrader
        warnings.simplefilter("ignore")
        loaded = load_kernel(puzzle, kernel)
        result = grade_loaded(puzzle, loaded, seed, settings, course=course, pictures=pictures, progress=progress,
                              performance=performance and not later)
        source = loaded.source if later and result.status == "pass" else None
    if handle:
        from .feedback import puzzle_html
        handle.update(HTML(puzzle_html(result, estimating=source is not None)))
        print(puzzle_text(result).splitlines()[0])  # a line of text too: for logs, nbgrader and screen readers
        if source is not None:
            threading.Thread(target=_estimate_into, args=(result, puzzle, source, course, settings, handle, HTML),
                             daemon=True).start()
    else:
        print(puzzle_text(result))
    return result


def _estimate_into(result, puzzle, source, course, settings, handle, HTML):
    """The performance estimate of a passing kernel, put into its result and its report when it comes. It must not
    write to stderr: by then another cell may be running (an nbgrader test cell with anything on stderr scores 0),
    and warnings' filters cannot be changed from a thread without racing the cell's own check()."""
    from .feedback import puzzle_html
    try:
        with np.errstate(all="ignore"):
            performance = estimate_source(puzzle, source, course, settings)
    except Exception as error:  # the verdict stands; the panel says why there is no estimate
        performance = unavailable(puzzle, settings.estimate_gpu,
                                  f"the estimate failed ({type(error).__name__}: {error})").to_dict()
    result.performance = performance
    try:
        handle.update(HTML(puzzle_html(result)))
    except Exception:  # the report keeps the verdict; nothing may reach another cell's stderr
        pass


def grade(puzzle_id, kernel, seed=0, course=None):
    """An nbgrader test cell: check the kernel, return its points, raise AssertionError unless it passes."""
    result = check(puzzle_id, kernel, seed, course, performance=False)  # the grade is the cases' alone
    if result.status != "pass":
        raise AssertionError(f"{puzzle_id}: {result.points:g}/{result.max_points:g} points; the report above says "
                             "which cases fail and why")
    return result.points
