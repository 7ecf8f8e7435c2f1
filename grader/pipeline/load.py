"""Find each puzzle's kernel in a submission (.py file, notebook, or a directory of them) without running it.

A submission is read, not executed: from every file the grader keeps only the imports of triton and math,
module-level constants, and the @triton.jit functions, and builds from them a small module (a
KernelSource) that the sandboxed worker compiles and interprets. Whatever else a notebook holds (check
calls, experiments, plots, `os._exit`, a monkeypatch of torch or of the grader) never runs, so it can
neither crash the grading nor change a verdict. Each file is parsed cell by cell, so a syntax error costs
only its cell.
"""
import ast
import inspect
import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from .results import Diagnostic

SUFFIXES = (".py", ".ipynb")
KEPT_IMPORTS = ("triton", "math")
JIT_DECORATORS = ("jit",)
WRAPPING_DECORATORS = ("autotune", "heuristics")
# A submission may declare its GPU configurations as `GPU_CONFIGS = [triton.Config(...), ...]` (or, in a file
# of several puzzles, {"kernel_name": [...]}) instead of @triton.autotune, which leaves the kernel as it runs
# on the CPU untouched. A kernel's own @triton.autotune comes first.
TUNING_NAME = "GPU_CONFIGS"


class SubmissionError(Exception):
    """The path given to the grader cannot be graded at all (bad usage, exit code 2)."""


@dataclass
class KernelSource:
    """A kernel as the worker runs it: a module of the submission's imports, constants and @jit functions."""
    kernel: str
    module: str
    origins: list  # per module line: where the student wrote it ("a.ipynb cell 3, line 5"), None if added
    configs: list = None  # the kernel's @triton.autotune configs, or else GPU_CONFIGS, as data, for the GPU stage

    def describe_line(self, line):
        """Where a line of the module was written: 'notebook.ipynb cell 3, line 5'."""
        origin = self.origins[line - 1] if line and 0 < line <= len(self.origins) else None
        return origin or f"line {line} of the kernel module"

    def line_text(self, line):
        lines = self.module.splitlines()
        return lines[line - 1].strip() if line and 0 < line <= len(lines) else ""


@dataclass
class Loaded:
    """What loading found for one puzzle: a kernel to grade, or the verdict that there is none."""
    status: str  # "found", "missing" or "error"
    source: KernelSource = None
    path: str = None
    diagnostics: list = field(default_factory=list)


@dataclass
class _Snippet:
    kind: str  # "import", "constant", "function", "tuning"
    name: str
    lines: list
    origins: list
    decorators: tuple = ()
    params: tuple = ()
    configs: list = None


@dataclass
class _File:
    path: Path
    snippets: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    readable: bool = True

    def function(self, name):
        """The last definition of `name`, as re-running the notebook top to bottom would leave it."""
        found = [s for s in self.snippets if s.kind == "function" and s.name == name]
        return found[-1] if found else None


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
    parsed = [read_file(f) for f in files]
    if not any(f.readable for f in parsed) and not Path(path).is_dir():
        raise SubmissionError(parsed[0].problems[0])
    if puzzle_ids:
        puzzles = [course.puzzle(pid) for pid in puzzle_ids]
    elif Path(path).is_dir():
        puzzles = list(course.puzzles)
    else:
        puzzles = [p for p in course.puzzles if parsed[0].function(p.kernel)] or list(course.puzzles)
    return {puzzle.id: _find_kernel(puzzle, parsed) for puzzle in puzzles}


def _find_kernel(puzzle, files):
    own_stems = {puzzle.notebook.stem, puzzle.solution.stem}
    own = [f for f in files if f.path.stem in own_stems] or (files if len(files) == 1 else [])
    for file in own + [f for f in files if f not in own]:
        snippet = file.function(puzzle.kernel)
        if snippet is None:
            continue
        problem = signature_problem(puzzle, f"{puzzle.kernel} in {file.path.name}",
                                    any(d in JIT_DECORATORS for d in snippet.decorators), snippet.params)
        if problem:
            return Loaded("error", path=str(file.path), diagnostics=[Diagnostic("load_error", problem)])
        return Loaded("found", _module(file, puzzle.kernel), str(file.path))
    problems = [p for f in own for p in f.problems]
    if problems:
        return Loaded("error", path=str(own[0].path), diagnostics=[Diagnostic("load_error", (
            f"{puzzle.kernel} could not be loaded from {own[0].path.name}:\n" + "\n".join(problems)))])
    where = ", ".join(f.path.name for f in files)
    return Loaded("missing", diagnostics=[Diagnostic("missing", (
        f"no kernel named {puzzle.kernel} in {where}. Define it as @triton.jit def {puzzle.signature()}"))])


def signature_problem(puzzle, what, jit, params):
    """Why `what` (a function with these parameters, @triton.jit or not) is not the puzzle's kernel, or None."""
    expected = f"the puzzle expects @triton.jit def {puzzle.signature()}"
    if not jit:
        return f"{what} is a plain Python function: decorate it with @triton.jit ({expected})."
    if len(params) != len(puzzle.params):
        return (f"{what} takes {len(params)} parameters ({', '.join(params)}) but the grader passes "
                f"{len(puzzle.params)}: {expected}.")
    return None


def read_file(path):
    """Parse a .py file or a notebook's code cells into the snippets a kernel module can use."""
    path = Path(path)
    file = _File(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        file.readable = False
        file.problems.append(f"{path.name} cannot be read: {error}")
        return file
    if path.suffix == ".py":
        _parse(file, text, None)
        return file
    try:
        cells = _code_cells(json.loads(text))
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        file.readable = False
        file.problems.append(f"{path.name} is not a readable notebook ({type(error).__name__}: {error}); open it "
                             "in JupyterLab and save it again, or export its code to a .py file")
        return file
    for number, cell in cells:
        _parse(file, cell, number)
    return file


def _code_cells(notebook):
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError("no list of cells")
    cells = []
    for number, cell in enumerate(notebook["cells"], start=1):
        if cell.get("cell_type") != "code":
            continue
        text = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if not text.lstrip().startswith("%%"):  # a cell magic: not Python
            cells.append((number, "\n".join(_comment_magic(line) for line in text.splitlines())))
    return cells


def _comment_magic(line):
    stripped = line.lstrip()
    return line.replace(stripped, "# " + stripped, 1) if stripped[:1] in ("%", "!") else line


def _parse(file, text, cell):
    where = f"cell {cell}, " if cell else ""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        file.problems.append(f"{where}line {error.lineno}: SyntaxError: {error.msg}")
        return
    lines = text.splitlines()
    for node in tree.body:
        snippet = _snippet(node, lines, file.path.name, cell)
        if snippet is not None:
            file.snippets.append(snippet)


def _snippet(node, lines, label, cell):
    def span(first, last):
        where = f"{label} cell {cell}, line " if cell else f"{label} line "
        return lines[first - 1:last], [f"{where}{n}" for n in range(first, last + 1)]

    if isinstance(node, (ast.Import, ast.ImportFrom)):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if all(m.split(".")[0] in KEPT_IMPORTS for m in modules) and getattr(node, "level", 0) == 0:
            return _Snippet("import", "", *span(node.lineno, node.end_lineno))
    elif _assigned_name(node) == TUNING_NAME and node.value is not None:
        # Configurations declared for the GPU stage only: read as data, never part of the kernel's module.
        if isinstance(node.value, ast.Dict):
            configs = {k.value if isinstance(k, ast.Constant) else None: _literal_configs(v)
                       for k, v in zip(node.value.keys, node.value.values)}
        else:
            configs = _literal_configs(node.value)
        return _Snippet("tuning", TUNING_NAME, *span(node.lineno, node.end_lineno), configs=configs)
    elif _assigned_name(node) and node.value is not None and _is_constant(node.value):
        # N = 4, or LOG2E: tl.constexpr = 1.4426950408889634
        return _Snippet("constant", _assigned_name(node), *span(node.lineno, node.end_lineno))
    elif isinstance(node, ast.FunctionDef):
        decorators = tuple(_decorator_name(d) for d in node.decorator_list)
        if not decorators or all(d in JIT_DECORATORS + WRAPPING_DECORATORS for d in decorators):
            body, origins = span(node.lineno, node.end_lineno)  # from `def`: the decorators are replaced
            return _Snippet("function", node.name, body, origins, decorators, tuple(a.arg for a in node.args.args),
                            _autotune_configs(node))
    return None


def _autotune_configs(function):
    """The configs of an @triton.autotune decorator, read as data: [{"kwargs", "num_warps", "num_stages"}]."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and _decorator_name(decorator) == "autotune":
            return _literal_configs(next((k.value for k in decorator.keywords if k.arg == "configs"),
                                         decorator.args[0] if decorator.args else None))
    return None


def _literal_configs(node):
    """Only literal configs can be read without running the student's code; anything else is reported as such."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return [{"error": "configs is not a literal list of triton.Config(...)"}]
    return [_config(element) for element in node.elts]


def _config(node):
    try:
        if not (isinstance(node, ast.Call) and _decorator_name(node) == "Config"):
            raise ValueError("not a triton.Config(...)")
        kwargs = ast.literal_eval(node.args[0] if node.args else next(k.value for k in node.keywords
                                                                        if k.arg == "kwargs"))
        options = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg in ("num_warps", "num_stages")}
        return {"kwargs": kwargs, **options}
    except (ValueError, StopIteration, SyntaxError) as error:
        return {"error": f"{ast.unparse(node)}: {error}"}


def _assigned_name(node):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _decorator_name(node):
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _is_constant(node):
    """A literal, or tl.constexpr(literal): the only globals a kernel may read."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Call) and _decorator_name(node) == "constexpr" and len(node.args) == 1:
        return _is_constant(node.args[0])
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool))


def _module(file, kernel):
    lines = ["import triton", "import triton.language as tl"]
    origins = [None, None]
    seen_imports = set()
    for snippet in file.snippets:
        if snippet.kind == "import":
            text = "\n".join(snippet.lines)
            if text in seen_imports:
                continue
            seen_imports.add(text)
        if snippet.kind in ("import", "constant"):
            lines += snippet.lines
            origins += snippet.origins
    functions = {}
    for snippet in file.snippets:  # the last definition of each name wins
        if snippet.kind == "function" and any(d in JIT_DECORATORS for d in snippet.decorators):
            functions.pop(snippet.name, None)
            functions[snippet.name] = snippet
    for snippet in functions.values():
        lines += ["", "@triton.jit"] + snippet.lines
        origins += [None, None] + snippet.origins
    declared = ([None] + [snippet.configs for snippet in file.snippets if snippet.kind == "tuning"])[-1]
    if isinstance(declared, dict):  # {kernel name: configs}, for a file of several puzzles
        declared = declared.get(kernel)
    configs = functions[kernel].configs if functions[kernel].configs is not None else declared
    return KernelSource(kernel, "\n".join(lines) + "\n", origins, configs)


def source_of_object(kernel, name):
    """The KernelSource of a live kernel object (the check cell of a notebook): its module's @jit functions,
    constants and triton imports, read back from their source."""
    from .interpret import python_function
    fn = python_function(kernel)
    lines = ["import triton", "import triton.language as tl"]
    origins = [None, None]
    for global_name, value in list(fn.__globals__.items()):
        if global_name.startswith("__"):
            continue
        if inspect.ismodule(value) and value.__name__.split(".")[0] in KEPT_IMPORTS:
            lines.append(f"import {value.__name__} as {global_name}")
        elif type(value).__name__ == "constexpr" and isinstance(value.value, (int, float, bool)):
            lines.append(f"{global_name} = tl.constexpr({value.value!r})")
        elif isinstance(value, (bool, int, float)):
            lines.append(f"{global_name} = {value!r}")
        else:
            continue
        origins.append(None)
    for global_name, value in list(fn.__globals__.items()):
        helper = python_function(value)
        if helper is None or helper.__name__ != global_name:
            continue
        try:
            source_lines, first_line = inspect.getsourcelines(helper)
        except (OSError, TypeError):
            continue
        text = textwrap.dedent("".join(source_lines))
        def_line = ast.parse(text).body[0].lineno  # the decorators come before it
        body = text.splitlines()[def_line - 1:]
        lines += ["", "@triton.jit"] + body
        origins += [None, None] + [f"line {i + 1} of {global_name}" for i in range(len(body))]
    if fn.__name__ != name:  # graded under the puzzle's name, whatever the notebook called it
        lines.append(f"{name} = {fn.__name__}")
        origins.append(None)
    return KernelSource(name, "\n".join(lines) + "\n", origins)
