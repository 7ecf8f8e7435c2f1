"""What a student's notebook uses: `check` grades a kernel in its check cell, `run` launches one by hand (all
its programs or chosen ones, ready for a debugger), `case` gives a case's tensors as the check made them,
`grade` is the check of an nbgrader test cell; `figures` draws the puzzles' pictures, `feedback` the
check's report.

Importing it starts a warm worker in the background (pipeline/warm.py): by the time the student has
written a kernel, the check cell's sandbox has imported torch and triton."""
from ..pipeline.warm import prestart
from .check import check, grade
from .debugging import case, run

prestart()

__all__ = ["case", "check", "grade", "run"]
