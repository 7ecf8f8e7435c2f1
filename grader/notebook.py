"""What a puzzle notebook calls: `check(puzzle_id, kernel)` grades the kernel defined in the notebook."""
from . import compile_check
from .course import load_course
from .grade import grade_kernel
from .report import puzzle_text
from .settings import DEFAULT


def check(puzzle_id, kernel, seed=0, course=None, compile_kernel=True):
    """Grade `kernel` on every case of the puzzle, print what happened, and return the result."""
    course = course or load_course()
    puzzle = course.puzzle(puzzle_id)
    job = compile_check.start([(puzzle, kernel, None)], DEFAULT) if compile_kernel else None
    result = grade_kernel(puzzle, kernel, seed)
    if job is not None:
        problems = job.results().get(puzzle.id, [])
        if result.status == "pass":
            compile_check.apply(result, problems)
    print(puzzle_text(result))
    return result
