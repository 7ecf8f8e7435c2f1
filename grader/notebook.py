"""What a puzzle notebook calls: `check(puzzle_id, kernel)` grades the kernel defined in the notebook;
`grade` is the same for an nbgrader test cell."""
import warnings

from .course import load_course
from .grade import grade_kernel
from .report import puzzle_text


def check(puzzle_id, kernel, seed=0, course=None):
    """Grade `kernel` on every case of the puzzle, in a sandboxed worker; print what happened, return the result."""
    course = course or load_course()
    with warnings.catch_warnings():  # a test cell with anything on stderr scores 0 under nbgrader
        warnings.simplefilter("ignore")
        result = grade_kernel(course.puzzle(puzzle_id), kernel, seed, course=course)
    print(puzzle_text(result))
    return result


def grade(puzzle_id, kernel, seed=0, course=None):
    """An nbgrader test cell: check the kernel, return its points, raise AssertionError unless it passes."""
    result = check(puzzle_id, kernel, seed, course)
    if result.status != "pass":
        raise AssertionError(f"{puzzle_id}: {result.points:g}/{result.max_points:g} points; the report above says "
                             "which cases fail and why")
    return result.points
