"""Load a submission (.py file, notebook, or a directory of them) and find each puzzle's kernel by name.

Code runs statement by statement, so one broken cell or statement costs only what it defines. Top-level
expression statements are skipped: in a notebook they are the check cells, plots and experiments
(`check(...)`, `add_kernel[grid](...)`), which grading must not run.
"""
import ast
import builtins
import contextlib
import hashlib
import io
import json
import sys
import tempfile
import types
from dataclasses import dataclass, field
from pathlib import Path

from .results import Diagnostic

SUFFIXES = (".py", ".ipynb")


class SubmissionError(Exception):
    """The path given to the grader cannot be graded at all (bad usage, exit code 2)."""


@dataclass
class SourceFile:
    path: Path
    namespace: dict = None
    problems: list = field(default_factory=list)  # syntax errors, statements that raised, unreadable file
    cell_starts: list = None  # notebooks: (first line in the module, cell number)

    def describe_line(self, filename, line):
        if self.cell_starts is None or line is None:
            return f"{self.path.name} line {line}"
        start, cell = max((s, c) for s, c in self.cell_starts if s <= line)
        return f"{self.path.name} cell {cell}, line {line - start + 1}"


@dataclass
class Loaded:
    """What loading found for one puzzle: a kernel to grade, or the verdict that there is none."""
    status: str  # "found", "missing" or "error"
    kernel: object = None
    source: str = None
    describe_line: object = None
    diagnostics: list = field(default_factory=list)


def submission_files(path):
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no such file or directory")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file()
                       and not p.name.startswith("."))
        if not files:
            raise SubmissionError(f"{path}: the directory has no .py or .ipynb files to grade")
        return files
    if path.suffix not in SUFFIXES:
        raise SubmissionError(f"{path}: expected a .py file, a .ipynb notebook or a directory of them")
    return [path]


def load_submission(path, course, puzzle_ids=None):
    """Map each puzzle to grade to a Loaded; raises SubmissionError for a path that cannot be graded."""
    files = submission_files(path)
    for puzzle_id in puzzle_ids or ():
        try:
            course.puzzle(puzzle_id)
        except KeyError as error:
            raise SubmissionError(error.args[0]) from None
    sources = [load_file(f) for f in files]
    if puzzle_ids:
        puzzles = [course.puzzle(pid) for pid in puzzle_ids]
    elif Path(path).is_dir():
        puzzles = list(course.puzzles)
    else:
        puzzles = [p for p in course.puzzles if p.kernel in (sources[0].namespace or {})] or list(course.puzzles)
    return {puzzle.id: _find_kernel(puzzle, sources) for puzzle in puzzles}


def _find_kernel(puzzle, sources):
    own_stems = {puzzle.notebook.stem, puzzle.solution.stem}
    own = [s for s in sources if s.path.stem in own_stems] or (sources if len(sources) == 1 else [])
    for source in own + [s for s in sources if s not in own]:
        if source.namespace is not None and puzzle.kernel in source.namespace:
            return Loaded("found", source.namespace[puzzle.kernel], str(source.path), source.describe_line)
    problems = [p for s in own for p in s.problems]
    if problems:
        return Loaded("error", source=str(own[0].path), diagnostics=[Diagnostic("load_error", (
            f"{puzzle.kernel} could not be loaded from {own[0].path.name}:\n" + "\n".join(problems)))])
    where = ", ".join(s.path.name for s in sources)
    return Loaded("missing", diagnostics=[Diagnostic("missing", (
        f"no kernel named {puzzle.kernel} in {where}. Define it as @triton.jit def {puzzle.signature()}"))])


def load_file(path):
    """Run a .py file or a notebook's code cells into a fresh module namespace."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        return SourceFile(path, problems=[f"{path.name} cannot be read: {error}"])
    if path.suffix == ".py":
        return _execute(SourceFile(path), path, [(1, 0, text)])
    try:
        cells = _code_cells(json.loads(text))
    except (ValueError, TypeError, KeyError) as error:
        return SourceFile(path, problems=[f"{path.name} is not a readable notebook ({error}); open it in "
                                          "JupyterLab and save it again, or export its code to a .py file"])
    module_lines, starts = [], []
    for number, cell in cells:
        module_lines.append(f"# cell {number}")
        cell = "\n".join(_comment_magic(line) for line in cell.splitlines())
        starts.append((len(module_lines) + 1, number, cell))
        module_lines += cell.splitlines()
    module_text = "\n".join(module_lines) + "\n"
    digest = hashlib.sha1(module_text.encode()).hexdigest()[:12]
    module_path = Path(tempfile.gettempdir()) / "triton-course" / f"{path.stem}-{digest}.py"
    module_path.parent.mkdir(parents=True, exist_ok=True)
    module_path.write_text(module_text)  # inspect and Triton read kernel source from a real file
    source = SourceFile(path, cell_starts=[(start, number) for start, number, _ in starts])
    return _execute(source, module_path, starts)


def _code_cells(notebook):
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError("no list of cells")
    cells = []
    for number, cell in enumerate(notebook["cells"], start=1):
        if cell.get("cell_type") != "code":
            continue
        text = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if not text.lstrip().startswith("%%"):  # a cell magic: not Python
            cells.append((number, text))
    return cells


def _comment_magic(line):
    stripped = line.lstrip()
    return line.replace(stripped, "# " + stripped, 1) if stripped[:1] in ("%", "!") else line


def _execute(source, module_path, cells):
    module = types.ModuleType(f"submission_{len(sys.modules)}_{source.path.stem}")
    module.__file__ = str(module_path)
    module.__dict__["__builtins__"] = builtins
    sys.modules[module.__name__] = module  # Triton and inspect look kernels' modules up by name
    output = io.StringIO()
    for first_line, number, text in cells:
        where = f"cell {number}, " if number else ""
        try:
            tree = ast.parse(text, filename=str(module_path))
        except SyntaxError as error:
            source.problems.append(f"{where}line {error.lineno}: SyntaxError: {error.msg}")
            continue
        ast.increment_lineno(tree, first_line - 1)
        for statement in tree.body:
            if isinstance(statement, ast.Expr):
                continue
            code = compile(ast.Module([statement], type_ignores=[]), str(module_path), "exec")
            try:
                with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                    exec(code, module.__dict__)
            except (Exception, SystemExit) as error:
                line = statement.lineno - first_line + 1
                source.problems.append(f"{where}line {line}: {type(error).__name__}: {error}")
    source.namespace = module.__dict__
    return source
