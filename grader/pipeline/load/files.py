"""Read a submission's files into Python syntax trees, without running, following or trusting anything in them.

Only regular files are read (a symbolic link, a device or a FIFO is refused, never followed or opened for
reading), each up to a size limit. A .py file is one source; a notebook is one source per code cell, turned
into Python by IPython's own input transformers (so `%matplotlib inline`, `!pip install ...` and `%%time`
cells mean what they mean in Jupyter). Each source is parsed on its own: a syntax error, or code too large
or too deeply nested to parse, costs only that cell.
"""
import ast
import importlib.util
import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..results import printable

SUFFIXES = (".py", ".ipynb")
# Cell magics whose body runs as ordinary Python in the user's namespace: its definitions count.
PYTHON_CELL_MAGICS = ("time", "capture")
MAGIC_NESTING = 4
# `%%writefile [-a] helpers.py`: a Python file in the notebook's folder, which its later cells may import.
# `%run helpers.py`: the module's file
RUN_FILE = re.compile(r"\s*(?:-\w+\s+)*([\"']?)(?:\./)?(\w+)\.py\1\s*")
WRITEFILE = re.compile(r"\s*(?:(-a|--append)\s+)?([\"']?)(?:\./)?([A-Za-z_]\w*\.py)\2\s*")
# IPython's token transforms (`x = !ls`, `%time f()`, `len?`) read the whole cell again for each such line: a cell
# of thousands of them kept the grader's own process busy for minutes. This many characters read again at most.
ESCAPED_LINE = re.compile(r"^(?:\s*[!%?/,;]"  # !ls, %time, ?len, /f x, ,f a b, ;f a b
                          r"|\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]"  # files = !ls
                          r"|[^#\n]*[\w)\]]\?\??[ \t]*$)", re.M)  # len?, not a comment's question
TRANSFORM_BUDGET = 400_000


@dataclass
class Source:
    """One piece of Python the student wrote: a .py file or one notebook cell."""
    label: str  # "vector_add.py", "01_vector_add.ipynb cell 3", "In [5]"
    tree: ast.Module = None
    problem: str = None  # why it was not parsed
    line_offset: int = 0  # lines before this text in what the student sees (the line of a %%time)
    cell: bool = False  # a notebook cell (its lines are counted from the cell's first)
    writes: tuple = None  # a `%%writefile helpers.py` cell: (file name, its text, whether it appends)

    def where(self, line):
        """'01_vector_add.ipynb cell 3, line 5' or 'vector_add.py line 5' for a line of this source's tree."""
        if not line:
            return self.label
        return f"{self.label}{', ' if self.cell else ' '}line {line + self.line_offset}"


@dataclass
class SubmissionFile:
    """One file of a submission, read and parsed."""
    path: Path
    sources: list = field(default_factory=list)
    problem: str = None  # the file could not be read at all
    # A notebook's `%%writefile helpers.py` cells: the .py files running it writes, which its later cells import
    written: list = field(default_factory=list)

    @property
    def name(self):
        return printable(self.path.name)

    @property
    def module_name(self):
        """The name other files import it by (`from helpers import ...`), or None for a notebook."""
        return self.path.stem if self.path.suffix == ".py" and self.path.stem.isidentifier() else None

    @property
    def problems(self):
        return [self.problem] if self.problem else [s.problem for s in self.sources if s.problem]


def list_directory(directory, settings):
    """The .py and .ipynb entries of a folder, sorted, hidden ones left out; links and devices are included so
    that reading them can refuse them with a reason."""
    entries = []
    with os.scandir(directory) as scan:
        for entry in scan:
            if entry.name.startswith(".") or Path(entry.name).suffix not in SUFFIXES:
                continue
            if entry.is_dir(follow_symlinks=False):
                continue
            entries.append(Path(entry.path))
            if len(entries) > settings.submission_files:
                break
    return sorted(entries)[:settings.submission_files]


@dataclass
class FileBytes:
    """A file as read from the file system: its bytes, or why it was not read. All that parsing needs, and
    nothing of the file system: it can travel to another machine (a cluster's worker)."""
    path: Path
    data: bytes = None
    problem: str = None


def read_bytes(path, settings, left=None):
    """The FileBytes of `path`, read within its kind's size limit and the `left` bytes the submission's other
    files left of settings.submission_bytes."""
    path = Path(path)
    limit = settings.notebook_file_bytes if path.suffix == ".ipynb" else settings.source_file_bytes
    try:
        return FileBytes(path, read_regular_file(path, limit if left is None else max(0, min(limit, left))))
    except TooLarge as error:
        if left is not None and left < limit:
            return FileBytes(path, problem=f"{printable(path.name)} was not read: with the files before it, the "
                                           f"folder holds more than {_size(settings.submission_bytes)}, all the "
                                           "grader reads of one submission")
        advice = ("; its outputs (pictures, long printouts) are most of it: clear them (Edit > Clear Outputs of All "
                  "Cells), save and submit again") if path.suffix == ".ipynb" else ""
        return FileBytes(path, problem=f"{printable(path.name)} {error}{advice}")
    except UnreadableFile as error:
        return FileBytes(path, problem=f"{printable(path.name)} {error}")


class CodeBudget:
    """The characters of code left to parse of one submission (settings.submission_code_chars): its files
    together, whose syntax trees are all kept while its kernels are found (about 400 bytes a character)."""

    def __init__(self, settings):
        self.left, self.chars = settings.submission_code_chars, settings.submission_code_chars

    def take(self, text):
        if len(text) > self.left:
            return False
        self.left -= len(text)
        return True

    def refusal(self, label):
        return f"{label} was not read: the submission's files together hold more than {self.chars} characters of code"


def read_file(path, settings):
    """A SubmissionFile with its sources parsed, or with the reason it could not be read."""
    return parse_file(read_bytes(path, settings), settings)


def parse_file(read, settings, budget=None):
    """The SubmissionFile of a FileBytes: its sources parsed, or the reason it could not be; `budget`: the
    submission's CodeBudget."""
    path, data = read.path, read.data
    file = SubmissionFile(path)
    if read.problem:
        file.problem = read.problem
        return file
    if path.suffix == ".py":
        try:
            text = importlib.util.decode_source(data)  # the encoding cookie and newlines as Python reads them
        except (UnicodeDecodeError, SyntaxError, LookupError) as error:
            file.problem = f"{file.name} is not readable Python text ({error})"
            return file
        if budget is not None and not budget.take(text):
            file.problem = budget.refusal(file.name)
            return file
        file.sources.append(parse_source(text, file.name, settings))
        return file
    try:
        cells = notebook_cells(data)
    except ValueError as error:
        file.problem = (f"{file.name} is not a readable notebook ({error}); open it in JupyterLab and save it "
                        "again, or export its code to a .py file")
        return file
    total = 0
    for number, text in cells:
        total += len(text)
        if total > settings.code_chars:
            file.sources.append(Source(f"{file.name} cell {number}", problem=(
                f"{file.name} cell {number}: the notebook holds more than {settings.code_chars} characters of code; "
                "the cells from this one on were not read")))
            break
        if budget is not None and not budget.take(text):
            file.sources.append(Source(f"{file.name} cell {number}", problem=budget.refusal(
                f"{file.name} from cell {number} on")))
            break
        file.sources.append(parse_source(text, f"{file.name} cell {number}", settings, notebook=True))
    file.written = written_files(file.sources, settings)
    return file


def written_files(sources, settings):
    """The .py files a notebook's `%%writefile` cells have written when its cells first import them, run from top to
    bottom (a later cell writing the same file replaces it, `-a` appends to it; Python keeps the module its first
    import read), each parsed as a file of its own. A file no cell imports after writing it is left out."""
    texts, cells, written = {}, {}, {}
    for source in sources:
        for name in _imported_files(source):
            if name in texts and name not in written:
                written[name] = _written_file(name, texts[name], cells[name], settings)
        if source.writes is not None:
            name, text, append = source.writes
            texts[name] = texts.get(name, "") + text if append else text
            cells[name] = cells.get(name, []) + [source] if append else [source]
    return list(written.values())


def _imported_files(source):
    """The file names (helpers.py) of the modules a source imports or %runs."""
    names = set()
    for node in ast.walk(source.tree) if source.tree is not None else ():
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level in (0, 1):
            names.add(node.module.split(".")[0])
        elif run_magic_module(node) is not None:
            names.add(run_magic_module(node))
    return {f"{name}.py" for name in names}


def run_magic_module(node):
    """The module `%run helpers.py` runs (IPython's `get_ipython().run_line_magic('run', 'helpers.py')`), for that
    call; None for any other node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
            node.func.attr == "run_line_magic" and len(node.args) == 2 and
            all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args) and
            node.args[0].value == "run"):
        return None
    file = RUN_FILE.fullmatch(node.args[1].value)
    return file.group(2) if file else None


def _written_file(name, text, cells, settings):
    if len(cells) == 1:  # its lines are the cell's, after the magic's
        label, cell, offset = f"{cells[0].label} (%%writefile {name})", True, cells[0].line_offset + 1
    else:  # appended by several cells: lines of the file they make
        label, cell, offset = f"{name} (written by {', '.join(c.label for c in cells)})", False, 0
    return SubmissionFile(Path(name), [replace(parse_source(text, label, settings, line_offset=offset), cell=cell)])


class UnreadableFile(Exception):
    """Why a path is not a file the grader reads: a link, a device, too large, ..."""


class TooLarge(UnreadableFile):
    """A file larger than the grader reads."""


def read_regular_file(path, limit):
    """The bytes of a regular file, at most `limit` of them; never follows a link, never blocks on a FIFO."""
    try:
        info = os.lstat(path)
    except OSError as error:
        raise UnreadableFile(f"cannot be read ({error.strerror})") from None
    _refuse_special(info)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise UnreadableFile(f"cannot be read ({error.strerror})") from None
    try:
        _refuse_special(os.fstat(descriptor))  # it may have been swapped for something else since the lstat
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(descriptor)
    if size > limit:
        raise TooLarge(f"is larger than {_size(limit)}: the grader reads files up to that size")
    return b"".join(chunks)


def _size(limit):
    return f"{limit / 2 ** 20:g} MiB" if limit >= 2 ** 20 else f"{limit / 2 ** 10:g} KiB"


def _refuse_special(info):
    if stat.S_ISLNK(info.st_mode):
        raise UnreadableFile("is a symbolic link: the grader does not follow links; submit the file itself")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode) or
                stat.S_ISBLK(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "a directory"
                if stat.S_ISDIR(info.st_mode) else "not a regular file")
        raise UnreadableFile(f"is {kind}: the grader reads only regular files")


def notebook_cells(data):
    """[(cell number, code)] of a notebook's code cells; raises ValueError when it is not a notebook."""
    try:
        notebook = json.loads(data)
    except RecursionError:
        raise ValueError("its JSON is nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"not JSON: {error}") from None
    if isinstance(notebook, dict) and notebook.get("nbformat") == 3 and isinstance(notebook.get("worksheets"), list):
        # An old notebook (nbformat 3), which JupyterLab and nbgrader convert as they open it: its code is `input`.
        notebook = {"cells": [dict(cell, source=cell.get("input", "")) if isinstance(cell, dict) else cell
                              for sheet in notebook["worksheets"] if isinstance(sheet, dict)
                              for cell in (sheet.get("cells") if isinstance(sheet.get("cells"), list) else [])]}
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError("no list of cells")
    cells = []
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise ValueError(f"cell {number} has no text as its source")
        cells.append((number, source))
    return cells


def parse_source(text, label, settings, notebook=False, line_offset=0, nesting=0):
    """A Source: the text parsed (after IPython's transformers when it is a notebook cell)."""
    if len(text) > settings.code_chars:
        return Source(label, problem=f"{label}: more than {settings.code_chars} characters of code; not read")
    if notebook:
        escaped = len(ESCAPED_LINE.findall(text))
        if escaped > 1 and (escaped + 1) * len(text) > TRANSFORM_BUDGET:
            return Source(label, problem=(
                f"{label}: {escaped} lines of shell commands, magics or help (!, %, ?) in {len(text)} characters, "
                "which IPython reads again one by one: more than the grader reads. Move the kernel to a cell of "
                "its own"))
        try:
            text = _ipython_transformer().transform_cell(text)
        except Exception as error:  # IPython's transformers are not meant for hostile input: the cell is lost
            return Source(label, problem=f"{label}: IPython cannot read this cell ({type(error).__name__})")
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        line = (error.lineno or 0) + line_offset
        return Source(label, problem=f"{label}, line {line}: SyntaxError: {error.msg}")
    except (ValueError, RecursionError, MemoryError) as error:
        reason = (f"too deeply nested or too large for Python's parser (the grader reads code nested up to "
                  f"{settings.syntax_depth} levels)") if not isinstance(error, ValueError) else str(error)
        return Source(label, problem=f"{label}: {reason}")
    depth = syntax_depth(tree, settings.syntax_depth)
    if depth > settings.syntax_depth:
        return Source(label, problem=(f"{label}: its code nests more than {settings.syntax_depth} levels deep (an "
                                      "expression of that many terms, a chain of that many attributes); not read"))
    source = Source(label, tree, line_offset=line_offset, cell=notebook)
    if notebook and nesting < MAGIC_NESTING:
        _expand_cell_magic(source, settings, nesting)
    return source


def syntax_depth(tree, limit):
    """How deep the tree nests, counted up to just past `limit` without recursion (the grader's own walks of
    the tree recurse: a deeper tree would exhaust the stack)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _expand_cell_magic(source, settings, nesting):
    """`%%time` and `%%capture` run their body as Python: parse the body in place of the magic's call.
    `%%writefile helpers.py` writes its body to a file: noted, for the notebook's later imports of it."""
    body = source.tree.body
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return
    call = body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "run_cell_magic"
            and len(call.args) == 3 and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
        return
    magic, line, text = (a.value for a in call.args)
    written = WRITEFILE.fullmatch(line)
    if magic == "writefile" and written:
        source.writes = (written.group(3), text, bool(written.group(1)))
        return
    if magic not in PYTHON_CELL_MAGICS:
        return
    inner = parse_source(call.args[2].value, source.label, settings, notebook=True, line_offset=source.line_offset + 1,
                         nesting=nesting + 1)
    source.tree, source.problem, source.line_offset = inner.tree, inner.problem, inner.line_offset


_TRANSFORMER = None


def _ipython_transformer():
    global _TRANSFORMER
    if _TRANSFORMER is None:
        from IPython.core.inputtransformer2 import TransformerManager
        _TRANSFORMER = TransformerManager()
    return _TRANSFORMER


def session_sources(shell, settings):
    """The cells a live IPython session ran, in the order it ran them (every run: a cell run again after others
    binds its names after theirs), as Sources labelled 'In [n]'. When the session ran more code than the grader
    reads, the latest cells are kept, and a Source whose problem says so stands for the earlier ones (one of them
    may hold a definition the check needed)."""
    kept, total, unread = [], 0, None
    for number, text in reversed(list(enumerate(shell.history_manager.input_hist_raw))):
        if not text.strip():
            continue
        if total + len(text) > settings.code_chars:
            unread = number
            break
        total += len(text)
        kept.append((number, text))
    sources = [parse_source(text, f"In [{number}]", settings, notebook=True) for number, text in reversed(kept)]
    if unread is not None:
        sources.insert(0, Source("this session", problem=(
            f"this session ran more than {settings.code_chars} characters of code: its cells In [{unread}] "
            "and before were not read; restart the kernel and run the notebook's cells again")))
    return sources
