"""Verdicts as plain data: a fixed set of statuses and diagnostic kinds, rendered elsewhere (report.py)."""
from dataclasses import asdict, dataclass, field

STATUSES = ("pass", "fail", "error", "missing")


class SubmissionError(Exception):
    """The path given to the grader cannot be graded at all (bad usage, exit code 2)."""


def printable(text, keep=""):
    """Text a submission or its worker produced, safe to print and to write into a report: every character that
    is not printable (a terminal's escape sequences, a line break that would forge a report's line, a byte of a
    file name that is not UTF-8) written as its Python escape, except those in `keep`."""
    text = str(text)
    if text.isprintable() and not keep:
        return text
    return "".join(c if c.isprintable() or c in keep else ascii(c)[1:-1] for c in text)
KINDS = {
    "mismatch": "the kernel wrote wrong values",
    "nonfinite": "the kernel wrote inf or NaN where the reference is finite",
    "unwritten_output": "output elements were never written",
    "out_of_bounds": "a load, store or atomic outside the tensor arguments (it was blocked)",
    "input_modified": "the kernel changed an input",
    "outside_write": "the kernel changed parent elements around a view",
    "kernel_error": "the kernel raised an error while interpreted",
    "order_dependent": "the result depends on the order the programs run in",
    "race": "two programs, or two lanes of one store, stored the same element",
    "read_before_write": "the kernel read an output before storing it (an output starts as garbage)",
    "undefined_lanes": "the result depends on masked-off lanes loaded without other= (0 on a GPU, NaN here)",
    "configuration_blocks": "right at the cases' blocks, wrong at the blocks the GPU stage launches with",
    "excess_loads": "the kernel loads far more than it needs (e.g. tiles that are entirely masked)",
    "stride": "contiguous cases pass, non-contiguous ones fail",
    "compile": "the GPU compiler rejects the kernel",
    "load_error": "the submission or its kernel could not be loaded",
    "timeout": "the kernel did not finish within the time limit",
    "crash": "the process running the kernel died",
    "out_of_memory": "the kernel exceeded the memory limit",
    "missing": "the kernel was not found",
}


@dataclass
class Diagnostic:
    kind: str
    message: str
    case: str = None
    program: tuple = None  # (launch index, (x, y, z)): the program it blames, to step through with run()

    def __post_init__(self):
        assert self.kind in KINDS, self.kind


@dataclass
class CaseResult:
    name: str
    description: str
    status: str  # pass | fail
    diagnostics: list = field(default_factory=list)
    replay: str = None  # the lines that launch the failing program of this case again (diagnose.replay_code)
    memory: dict = None  # which program loaded and stored each element (access.memory_map), for pictures


@dataclass
class PuzzleResult:
    id: str
    title: str
    status: str
    points: float
    max_points: float
    source: str = None  # the file the kernel was graded from
    cases: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what the report says besides the verdict: files ignored, ...
    performance: dict = None  # how fast a passing kernel would run on a GPU (performance.Performance.to_dict)

    def __post_init__(self):
        assert self.status in STATUSES, self.status

    @property
    def kinds(self):
        return {d.kind for d in self.diagnostics}


@dataclass
class GradeReport:
    puzzles: list
    sandbox: str = None  # how the kernels were isolated: "bubblewrap" or "resource limits only"
    isolation: str = None  # the same, in words: what the worker could see and do

    @property
    def points(self):
        return sum(p.points for p in self.puzzles)

    @property
    def max_points(self):
        return sum(p.max_points for p in self.puzzles)

    @property
    def passed(self):
        return all(p.status == "pass" for p in self.puzzles)

    def puzzle(self, puzzle_id):
        return next(p for p in self.puzzles if p.id == puzzle_id)

    def to_dict(self):
        return {"puzzles": [asdict(p) for p in self.puzzles], "points": self.points, "max_points": self.max_points,
                "sandbox": self.sandbox, "isolation": self.isolation}
