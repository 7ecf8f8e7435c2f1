"""What a student's notebook uses: `check` grades a kernel in its check cell, `run` launches one by hand,
`grade` is the check of an nbgrader test cell; `figures` draws the puzzles' pictures, `feedback` the
check's report."""
from .check import check, grade, run

__all__ = ["check", "grade", "run"]
