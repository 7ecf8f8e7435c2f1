"""The load stage: a submission becomes, for each puzzle, the kernel to grade or the verdict that there is none.

A submission is a .py file, a notebook, a folder of them, or the live kernel of a notebook's check cell (then
the cells the session ran, in the order it ran them). Every entry point of the grader (check(),
`triton-course check`, `grade`, nbgrader, `bench`, `inspect`) loads through `load_submission` or
`load_live`, so the same submission gets the same verdict through each.

Nothing of the submission runs here: files.py reads and parses it, module.py reads what each file defines and
rebuilds the kernel's module from its syntax tree, rules.py says what a kernel may contain. Kernel
parameters are matched by position, whatever they are named; when a folder holds the kernel in several
files, the choice follows rules a student can guess, and the report names the file graded and the files
ignored.
"""
import ast
import copy
import dis
import re
import types
from dataclasses import dataclass, field, replace
from pathlib import Path

import triton

from ...course import with_configuration_cases
from ...settings import DEFAULT
from ..results import Diagnostic, SubmissionError, printable
from .files import (SUFFIXES, CodeBudget, SubmissionFile, list_directory, parse_file, read_bytes, read_file,
                    read_regular_file, session_sources, UnreadableFile, written_files)
from .module import (MAIN, ModuleDefinitions, as_written, closure, config_constants, constexpr_params, kernel_params,
                     param_defaults, rebuild, skeleton, typed, written_defaults)
from .rules import resolve_decorator, stdlib_or_installed
from ..interpret import LAUNCH_OPTIONS

__all__ = ["KernelSource", "Loaded", "Submission", "SubmissionError", "load_submission", "read_submission",
           "load_read", "load_live", "SUFFIXES", "MAIN"]

FINAL_WORDS = ("final", "submission", "submit", "done", "solution", "solved")
DRAFT_WORDS = ("draft", "old", "backup", "bak", "copy", "tmp", "temp", "scratch", "test", "try", "attempt", "wip",
               "orig", "skeleton", "unused")
PROBLEMS_SHOWN = 3


def _heuristics_outside_the_autotuner(binding):
    """Whether a @triton.heuristics decorator of the kernel sits above its @triton.autotune (applied after it)."""
    order = [resolve_decorator(decorator, binding.module)[0] for decorator in binding.jit["decorators"]]
    return triton.autotune in order and triton.heuristics in order[:order.index(triton.autotune)]


def _heuristics_inside_the_autotuner(binding):
    """Whether a @triton.heuristics decorator of the kernel sits below its @triton.autotune (applied before it)."""
    order = [resolve_decorator(decorator, binding.module)[0] for decorator in binding.jit["decorators"]]
    return triton.autotune in order and triton.heuristics in order[order.index(triton.autotune) + 1:]


LEFT_OUT = object()  # a constant a tuning configuration leaves at the kernel's default, not passed to its launches


@dataclass
class KernelSource:
    """A kernel as the worker runs it: modules rebuilt from the submission's syntax tree, and what they are."""
    kernel: str  # the kernel's name in the main module
    modules: dict  # module name -> source text; MAIN (the graded file's) first, then sibling files imported
    origins: dict  # module name -> where each of its lines was written ("a.ipynb cell 3, line 5")
    params: tuple  # the kernel's parameters in order, as the student named them
    constexprs: tuple = ()  # the parameters annotated tl.constexpr
    heuristics: tuple = ()  # the parameters @triton.heuristics computes
    configs: str = None  # an expression of the GPU configurations (@triton.autotune or GPU_CONFIGS)...
    configs_module: str = None  # ... evaluated in this module, in the sandbox of the GPU stage
    prune: str = None  # an expression of @triton.autotune's prune_configs_by, evaluated there too
    config_problems: tuple = ()  # why the GPU configurations cannot be read
    # {parameter: value} of the kernel's own parameters as the first tuning configuration gives them (the rebuilt
    # kernel's defaults): passed to each launch as Triton's autotuner passes them, where a heuristic sees them
    tuned: dict = field(default_factory=dict)
    # the same as each tuning configuration after the first gives them, where they differ from the first's: the
    # cases run again with each
    variants: tuple = ()
    # {block: value} of the puzzle's blocks as each tuning configuration written out gives them, in the course's
    # names: the GPU stage may launch any (course.with_configuration_cases)
    configured_blocks: tuple = ()
    # The configurations are computed (itertools.product, a function of several statements): their blocks are read
    # from what the worker evaluates (grade.with_computed_blocks), as the GPU stage's compile sandbox evaluates them
    configs_computed: bool = False
    # The names the tuning configurations give, where every @triton.heuristics sits above @triton.autotune: Triton
    # runs those heuristics on the launch's own arguments, before the autotuner adds a configuration's constants
    unseen_by_heuristics: tuple = ()
    # Whether host code runs at each launch or compile (a heuristic, a pruner, a @triton.constexpr_function): what it
    # could keep from one to the next is refused (worker.module_stopped)
    host_code_at_launch: bool = False

    @property
    def module(self):
        return self.modules[MAIN]

    def with_configuration_cases(self, puzzle, limit=None):
        """The puzzle with its largest case again at the blocks the GPU stage may launch this kernel with."""
        return with_configuration_cases(puzzle, self.configured_blocks, self.configs is not None, limit)

    def describe_line(self, line, module=MAIN):
        """Where a line of a rebuilt module was written: 'notebook.ipynb cell 3, line 5'."""
        origins = self.origins.get(module, [])
        origin = origins[line - 1] if line and 0 < line <= len(origins) else None
        return origin or f"line {line} of the kernel's module"

    def line_text(self, line, module=MAIN):
        lines = self.modules.get(module, "").split("\n")
        return as_written(lines[line - 1].strip()) if line and 0 < line <= len(lines) else ""


@dataclass
class Loaded:
    """What loading found for one puzzle: a kernel to grade, or the verdict that there is none."""
    status: str  # "found", or the verdict: "missing", "error" (unreadable, wrong signature), "fail" (not Triton)
    source: KernelSource = None
    path: str = None  # the file the kernel was graded from
    diagnostics: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # for the report: files ignored, what the parameters stand for


@dataclass
class Submission:
    """A submission as read from the file system (read_submission): its files' bytes and nothing of the file
    system, so that it can be graded on another machine (a cluster's worker) with the same verdicts."""
    path: Path
    is_dir: bool
    files: list  # FileBytes of the graded files
    siblings: list = field(default_factory=list)  # FileBytes of the .py files a lone notebook may import


def load_submission(path, course, puzzle_ids=None, settings=DEFAULT, modules_from=None):
    """Map each puzzle to grade to a Loaded; raises SubmissionError for a path that cannot be graded at all.

    `modules_from`: the student's folder, whose .py files a single notebook may import (nbgrader's layout).
    A folder's own files may import each other; a lone file imports nothing beside it (its neighbours may be
    other students' work).
    """
    return load_read(read_submission(path, course, puzzle_ids, settings, modules_from), course, puzzle_ids, settings)


def read_submission(path, course, puzzle_ids=None, settings=DEFAULT, modules_from=None):
    """The Submission at `path` (load_submission's first half, the only one that touches the file system)."""
    path = Path(path)
    for puzzle_id in puzzle_ids or ():
        _puzzle(course, puzzle_id)
    try:
        if path.is_symlink():
            raise SubmissionError(f"{printable(path)} is a symbolic link: the grader does not follow links; "
                                  "submit the file or folder itself")
        is_dir = path.is_dir()
    except OSError as error:
        raise SubmissionError(f"{printable(path)}: {error.strerror}") from None
    if is_dir:
        files = _read_within_budget(list_directory(path, settings), settings)
        if not files:
            raise SubmissionError(f"{printable(path)}: the directory has no .py or .ipynb files to grade")
        return Submission(path, True, files)
    if not path.exists():
        raise SubmissionError(f"{printable(path)}: no such file or directory")
    if path.suffix not in SUFFIXES:
        raise SubmissionError(f"{printable(path)}: expected a .py file, a .ipynb notebook or a directory of "
                              "them")
    read = read_bytes(path, settings)
    siblings = _read_within_budget([p for p in list_directory(modules_from, settings) if p.suffix == ".py"],
                                   settings, spent=len(read.data or b"")) if modules_from else []
    return Submission(path, False, [read], siblings)


def _read_within_budget(paths, settings, spent=0):
    """The FileBytes of `paths`, in their order, all of them together within settings.submission_bytes (less the
    `spent` bytes already read of the submission): the .py files are read first, then the notebooks."""
    read, left = {}, settings.submission_bytes - spent
    for path in sorted(paths, key=lambda path: path.suffix != ".py"):
        read[path] = read_bytes(path, settings, left)
        left -= len(read[path].data or b"")
    return [read[path] for path in paths]


def load_read(submission, course, puzzle_ids=None, settings=DEFAULT):
    """load_submission's second half: the Submission's files parsed, each puzzle's kernel found."""
    budget = CodeBudget(settings)
    files = [parse_file(read, settings, budget) for read in submission.files]
    if submission.is_dir:
        if all(file.problem for file in files):
            raise SubmissionError(f"{printable(submission.path)}: none of its files could be read:\n"
                                  + "\n".join(file.problem for file in files[:10]))
        siblings = _siblings(files)
    else:
        if files[0].problem:
            raise SubmissionError(files[0].problem)
        siblings = _siblings([parse_file(read, settings, budget) for read in submission.siblings])
    modules = [ModuleDefinitions(f, with_written(f, siblings)) for f in files if not f.problem]
    if puzzle_ids:
        puzzles = [course.puzzle(pid) for pid in puzzle_ids]
    elif submission.is_dir:
        puzzles = list(course.puzzles)
    else:
        defined = [p for p in course.puzzles if modules and p.kernel in modules[0]]
        puzzles = defined or list(course.puzzles)
    loaded = {}
    for puzzle in puzzles:
        checked = [_as_checked(puzzle, module, with_written(module.file, siblings)) for module in modules]
        loaded[puzzle.id] = _find_kernel(puzzle, files, [module for module, _ in checked])
        loaded[puzzle.id].notes += [note for module, note in checked if note and module.file.name ==
                                    loaded[puzzle.id].path]
    return loaded


CHECK_CALLS = ("check", "grade")  # the notebook's check cell, nbgrader's test cell


def _as_checked(puzzle, module, siblings):
    """(the definitions of a notebook as its last statement that checks `puzzle` sees them when the notebook runs
    from the top, as Restart & Run All and an autograder that runs it do; a note when a later cell redefines what
    it checks). Any other file, a notebook without such a check, one whose check comes before the kernel's
    definition or sees only its untouched skeleton (the student wrote it in a cell below), is read whole."""
    if module.file.path.suffix != ".ipynb":
        return module, None
    sources = module.file.sources
    names = _check_names(sources)
    checks = [(index, position) for index, source in enumerate(sources) if source.tree is not None
              for position, statement in enumerate(source.tree.body) if _checks(statement, puzzle, names)]
    if not checks:
        return module, None
    index, position = checks[-1]
    if index == len(sources) - 1 and position == len(sources[index].tree.body) - 1:
        return module, None  # nothing after the check
    last = sources[index]
    cut = replace(last, tree=ast.Module(body=last.tree.body[:position], type_ignores=[]))
    seen = ModuleDefinitions(replace(module.file, sources=sources[:index] + [cut]), siblings)
    kernel = seen.get(puzzle.kernel)
    if kernel is None or kernel.kind != "jit" or skeleton(kernel):
        return module, None
    final = module.get(puzzle.kernel)
    if final is not None and _same_text(_fingerprint(final), _fingerprint(kernel)):
        return seen, None
    return seen, (f"graded the {puzzle.kernel} that {last.label} checks: the cells after that check define it (or "
                  "what it uses) again, and they are not graded, as when the notebook runs from the top (Restart & "
                  "Run All). Put your final kernel above the check cell.")


def _check_names(sources):
    """The names a notebook calls its check by: check and grade, and what `from grader... import check as c`
    binds."""
    names = set(CHECK_CALLS)
    for source in sources:
        for statement in source.tree.body if source.tree is not None else ():
            if isinstance(statement, ast.ImportFrom) and (statement.module or "").split(".")[0] == "grader":
                names.update(alias.asname for alias in statement.names if alias.name in CHECK_CALLS and alias.asname)
    return names


def _checks(statement, puzzle, names):
    """True for a statement that checks `puzzle`: a call of a check (`names`) whose first argument or puzzle_id
    is the puzzle's id, anywhere in it (`check(...)`, `result = check(...)`, `assert check(...).status ...`)."""
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "puzzle_id"), None)
        if name in names and isinstance(first, ast.Constant) and first.value == puzzle.id:
            return True
    return False


def _same_text(modules, others):
    """Whether two rebuilt closures hold the same lines, whatever their order and however often (an import bound
    again later repeats or moves its line, and changes nothing the kernel does)."""
    if modules is None or others is None:
        return modules == others
    return {name: set(text.split("\n")) for name, text in modules.items()} == \
        {name: set(text.split("\n")) for name, text in others.items()}


def load_live(kernel, puzzle, settings=DEFAULT):
    """The Loaded of a live kernel object (a check cell's argument): read from the cells this IPython session
    ran, or from the .py file it was defined in, like any other submission."""
    from ..interpret import python_function
    fn = python_function(kernel)
    if fn is None:
        return Loaded("error", diagnostics=[Diagnostic("load_error", (
            f"{puzzle.kernel} is a {type(kernel).__name__}, not a @triton.jit kernel (the puzzle expects "
            f"@triton.jit def {puzzle.signature()})."))])
    shell = _ipython_shell()
    filename = fn.__code__.co_filename
    in_session = shell is not None and not _module_file(filename)
    if in_session:
        sources = session_sources(shell, settings)
        file = SubmissionFile(Path("this notebook"), sources, written=written_files(sources, settings))
        folder = Path.cwd()
    else:
        try:
            read_regular_file(filename, settings.source_file_bytes)
        except UnreadableFile as error:
            return Loaded("error", diagnostics=[Diagnostic("load_error", (
                f"the source of {fn.__name__} ({printable(filename)}) {error}"))])
        file = read_file(filename, settings)
        folder = Path(filename).parent
    siblings = _siblings([read_file(p, settings) for p in list_directory(folder, settings) if p.suffix == ".py"
                          and p != Path(filename)])
    definitions = ModuleDefinitions(file, with_written(file, siblings))
    # The puzzle's name, where it holds this function (decorated by calls: kernel = triton.autotune(...)(fn), as the
    # file's loader binds it); else the kernel's own name, or (kernel = triton.jit(fn)) another name whose function
    # it is.
    binding = definitions.get(puzzle.kernel)
    if binding is None or binding.kind != "jit" or not _same_function(_named(binding.resolved().function,
                                                                              fn.__name__), fn):
        named = [definitions.get(fn.__name__)] + [b for b in definitions.names.values() if b.kind == "jit"]
        binding = next((b for b in named if b is not None and b.kind == "jit" and
                        b.resolved().function.name == fn.__name__ and _same_function(b.resolved().function, fn)),
                       None)
    if binding is None:
        found = definitions.get(fn.__name__)
        if found is not None and found.kind != "jit":
            why = _not_a_kernel(puzzle, found)
        else:
            why = (f"the {fn.__name__} passed to check() is not the last definition of {fn.__name__} that ran in "
                   f"{file.name}: run the cell that defines it again, then the check")
        if file.problems:
            why += f" ({file.problems[-1]})"
        return Loaded("error", path=file.name, diagnostics=[Diagnostic("load_error", why)])
    if in_session and definitions.get(puzzle.kernel) is not binding:
        # The autograder finds the kernel by the puzzle's name: a check that grades it under another would pass
        # a notebook the autograder finds nothing in.
        return Loaded("error", path=file.name, diagnostics=[Diagnostic("load_error", (
            f"the autograder grades the kernel named {puzzle.kernel}, and in this notebook that name is not "
            f"{fn.__name__}: name your kernel {puzzle.kernel} (def {puzzle.kernel}(...)), run its cell, then the "
            "check"))])
    return _loaded(puzzle, file, binding, [])


def _puzzle(course, puzzle_id):
    try:
        return course.puzzle(puzzle_id)
    except KeyError as error:
        raise SubmissionError(error.args[0]) from None


def _siblings(files):
    """{import name: file} of the .py files a submission's own code may import."""
    return {f.module_name: f for f in files if f.module_name and not stdlib_or_installed(f.module_name)}


def with_written(file, siblings):
    """The files `file` may import: the submission's, and those its own `%%writefile` cells write (which running
    the notebook leaves in place of a file of the same name)."""
    return {**siblings, **_siblings(file.written)} if file.written else siblings


def _ipython_shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _module_file(filename):
    """True when a function's code comes from a .py file on disk, not from a notebook cell."""
    path = Path(filename)
    return path.suffix == ".py" and "ipykernel_" not in filename and not filename.startswith("<") and path.is_file()


def _named(node, name):
    """The definition `node` under another name (a kernel bound to a name by decorators applied as calls)."""
    if node.name == name:
        return node
    node = copy.copy(node)
    node.name = name
    return node


def _same_function(node, fn):
    """True when the live function `fn` was made from the definition `node`: the same instructions, names and
    constants, all the way into nested code. Works where Python kept no source (a `%%time` cell compiles its
    body as '<timed exec>'). Line numbers, and how IPython's compiler spells a method call, do not count."""
    try:
        compiled = compile(ast.Module([node], []), fn.__code__.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return False
    code = next((c for c in compiled.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name), None)
    return code is not None and _shape(code) == _shape(fn.__code__)


_IGNORED = {"CACHE", "RESUME", "PRECALL", "NOP", "EXTENDED_ARG", "PUSH_NULL", "KW_NAMES"}


def _shape(code):
    """What a code object does, without its line numbers, jump offsets or method-call spelling."""
    shape = [code.co_argcount, code.co_varnames]
    for instruction in dis.get_instructions(code):
        if instruction.opname in _IGNORED:
            continue
        name = "LOAD_ATTR" if instruction.opname == "LOAD_METHOD" else instruction.opname
        value = instruction.argval
        if isinstance(value, types.CodeType):
            value = _shape(value)
        elif "JUMP" in name or name in ("FOR_ITER", "SEND") or name.startswith("CALL"):
            value = None
        shape.append((name, value if isinstance(value, (str, int, float, bool, type(None), list, tuple)) else
                      repr(value)))
    return shape


# --- finding a puzzle's kernel ------------------------------------------------------------------------------------

def _find_kernel(puzzle, files, modules):
    candidates = [(m, m.get(puzzle.kernel)) for m in modules if m.get(puzzle.kernel) is not None]
    kernels = [(m, b) for m, b in candidates if b.kind == "jit"]
    if not kernels:
        if candidates:
            module, binding = candidates[0]
            return Loaded("error", path=module.file.name, diagnostics=[Diagnostic("load_error",
                                                                                  _not_a_kernel(puzzle, binding))])
        own = [f for f in files if _own(puzzle, f) or len(files) == 1]
        problems = [p for f in own for p in f.problems]
        if problems:
            return Loaded("error", path=own[0].name, diagnostics=[Diagnostic("load_error", (
                f"{puzzle.kernel} could not be loaded from {own[0].name}:\n" + "\n".join(problems[:10])))])
        where = ", ".join(f.name for f in files if not f.problem)
        # A file or cell that could not be read may hold the kernel: say which, so the student fixes that one.
        unread = [p for f in files for p in f.problems]
        return Loaded("missing", diagnostics=[Diagnostic("missing", (
            f"no kernel named {puzzle.kernel} in {where}. Define it as @triton.jit def {puzzle.signature()}"))]
            + ([Diagnostic("load_error", "not read (if the kernel is there, fix this first):\n" + "\n".join(unread[:5]))]
               if unread else []))
    ranked = sorted(((_rank(puzzle, m.file, b), index, m, b) for index, (m, b) in enumerate(kernels)),
                    key=lambda item: item[:2])
    best_rank, _, module, binding = ranked[0]
    chosen_text = _fingerprint(binding)
    notes = []
    for rank, _, other, other_binding in ranked[1:]:
        if _same_definition(other_binding, binding) or _fingerprint(other_binding) == chosen_text:
            notes.append(f"{other.file.name} defines the same {puzzle.kernel}: not graded separately")
        elif rank == best_rank:
            return Loaded("error", path=module.file.name, diagnostics=[Diagnostic("load_error", (
                f"{module.file.name} and {other.file.name} both define {puzzle.kernel}, differently, and nothing "
                f"says which one to grade: delete one, or name the one to grade after the puzzle "
                f"({puzzle.notebook.name} or {puzzle.solution.name}) or with 'final' in its name"))])
        else:
            notes.append(f"{other.file.name} also defines {puzzle.kernel}, but {module.file.name} was graded "
                         f"({_why_preferred(best_rank, rank)})")
    return _loaded(puzzle, module.file, binding, notes)


def _rank(puzzle, file, binding):
    """Lower is preferred: a written kernel over a skeleton, the puzzle's own file, a final over a draft."""
    stem = file.path.stem.lower()
    words = set(re.split(r"[^a-z]+", stem))
    exact = stem in (puzzle.notebook.stem.lower(), puzzle.solution.stem.lower(), puzzle.id)
    word = 0 if words & set(FINAL_WORDS) else 2 if words & set(DRAFT_WORDS) or re.search(r"copy\d*$", stem) else 1
    return (skeleton(binding), not exact, not _own(puzzle, file), word)


def _own(puzzle, file):
    stem = file.path.stem.lower().replace("-", "_")
    return any(key in stem for key in (puzzle.id, puzzle.notebook.stem.lower(), puzzle.solution.stem.lower()))


def _why_preferred(best, other):
    if best[0] != other[0]:
        return "the other is an untouched skeleton"
    if best[1] != other[1] or best[2] != other[2]:
        return "it is named after the puzzle"
    return "the other's name marks it as a draft or a copy" if other[3] > best[3] else "its name marks it as final"


def _same_definition(one, other):
    """Whether two bindings name one definition: a notebook's `from my_kernels import add_kernel` (or %run, or
    import *) and my_kernels.py's own `def add_kernel`, each file read once for itself and once for the files
    that import it."""
    one, other = one.resolved(), other.resolved()
    return one is other or (one.module.file is other.module.file and one.name == other.name and
                            getattr(one.statement, "lineno", None) == getattr(other.statement, "lineno", None))


def _fingerprint(binding):
    """The rebuilt modules' text: two files whose kernels rebuild the same are the same kernel."""
    try:
        return {name: text for name, (text, _) in rebuild(closure(binding).bindings, binding.module).items()}
    except RecursionError:
        return None


def _not_a_kernel(puzzle, binding):
    name = f"{puzzle.kernel} in {binding.module.file.name}"
    expected = f"the puzzle expects @triton.jit def {puzzle.signature()}"
    if binding.kind == "function":
        return f"{name} is a plain Python function: decorate it with @triton.jit ({expected})."
    if binding.kind == "constexpr_function":
        return f"{name} is a @triton.constexpr_function, not a kernel: decorate it with @triton.jit ({expected})."
    return f"{name} is {binding.reason or 'not a function'}: {expected}."


def _loaded(puzzle, file, binding, notes):
    """Check the chosen kernel and everything it needs, then rebuild its modules."""
    kernel_closure = closure(binding)
    params = kernel_params(binding)
    defaults = param_defaults(binding)
    # A parameter beyond the puzzle's that tuning configurations give (Triton's matmul tutorial's GROUP_SIZE_M), each
    # one or, where it has a default written out, some: the first configuration's value is what every case runs
    # with first, and each other value a configuration gives it (or leaves it at) is a variant every case runs
    # again with, as the autotuner may launch any. Where every configuration gives it, the first one's value is
    # written as its default in the rebuilt kernel.
    given = config_constants(kernel_closure.configs, kernel_closure.configs_module)
    # Where a heuristic runs, a configuration that leaves a constant out runs the cases without it (the kernel's
    # default applies): Triton's autotuner passes a configuration's own constants alone, and a heuristic below it
    # that asks whether one is given must not see the default given.
    written = {name: LEFT_OUT for name in defaults} if kernel_closure.heuristics else written_defaults(binding)

    def configured(config, name):
        return config[name] if name in config else written[name]

    def launched(config):
        return {name: configured(config, name) for name in tuned if configured(config, name) is not LEFT_OUT}
    tuned = [name for name in params[len(puzzle.params):] if name not in kernel_closure.heuristics and given and
             any(name in config for config in given) and all(name in config or name in written for config in given)]
    first = launched(given[0]) if given else {}
    binding.resolved().jit["tuned_defaults"] = {name: value for name, value in first.items()
                                                if all(name in config for config in given)}
    variants = distinct_variants(first, [launched(config) for config in given[1:]])
    starred = starred_problem(puzzle, f"{puzzle.kernel} in {file.name}", binding.resolved().function.args)
    if starred:
        return Loaded("error", path=file.name, notes=notes, diagnostics=[Diagnostic("load_error", starred)])
    problem = signature_problem(puzzle, f"{puzzle.kernel} in {file.name}", params, kernel_closure.heuristics,
                                defaults | set(tuned))
    if problem and kernel_closure.configs is not None:
        problem += (" A parameter the tuning configurations give must be written out (a number, boolean or "
                    "string, a module constant bound once to one, or arithmetic of a comprehension's loop "
                    "variables) in every triton.Config, of a list "
                    "written out in the decorator, a comprehension over lists, tuples, range() or module constants "
                    "written out, or a list returned by a function defined once (which configuration Triton "
                    "launches is not the grader's to say), or have a default.")
    if problem:
        return Loaded("error", path=file.name, notes=notes, diagnostics=[Diagnostic("load_error", problem)])
    if kernel_closure.problems:
        language = [(s, p) for s, p in kernel_closure.problems if not p.host]
        problems = language or kernel_closure.problems
        shown = [problem.describe(source) for source, problem in problems[:PROBLEMS_SHOWN]]
        if len(problems) > PROBLEMS_SHOWN:
            shown.append(f"({len(problems) - PROBLEMS_SHOWN} more like these)")
        if language:  # what the GPU compiler rejects as well: the kernel fails
            return Loaded("fail", path=file.name, notes=notes, diagnostics=[Diagnostic("compile", (
                f"{puzzle.kernel} is not Triton's kernel language (the GPU compiler rejects it, or compiles it "
                "otherwise than the interpreter runs it):\n"
                + "\n".join(shown)))])
        return Loaded("error", path=file.name, notes=notes, diagnostics=[Diagnostic("load_error", (
            f"{puzzle.kernel} needs host code that the grader does not run for a submission:\n" + "\n".join(shown)))])
    try:
        modules = rebuild(kernel_closure.bindings, binding.module)
    except RecursionError:
        return Loaded("error", path=file.name, notes=notes, diagnostics=[Diagnostic("load_error", (
            f"{puzzle.kernel} in {file.name} is nested too deeply for the grader to read"))])
    except ValueError as error:
        return Loaded("error", path=file.name, notes=notes, diagnostics=[Diagnostic("load_error", (
            f"{puzzle.kernel} in {file.name}: {error}"))])
    unused = [name for name in kernel_closure.heuristics if name not in params and name not in LAUNCH_OPTIONS]
    if unused:  # Triton drops them too
        notes = notes + [f"@triton.heuristics computes {', '.join(unused)}, which {puzzle.kernel} has no parameter "
                         "for: it has no effect"]
    if kernel_closure.prune_problems:
        notes = notes + [f"{puzzle.kernel}'s prune_configs_by is host code the grader does not run "
                         f"({kernel_closure.prune_problems[0]}): every tuning configuration runs on every case"]
    renamed = [f"{mine} stands for the puzzle's {theirs}" for mine, theirs in zip(params, puzzle.params)
               if mine != theirs]
    if renamed:
        notes = notes + [f"{puzzle.kernel}'s parameters are matched by position: " + ", ".join(renamed)]
    configs = None
    if kernel_closure.configs is not None:
        configs = ast.unparse(kernel_closure.configs)
    prune = ast.unparse(kernel_closure.prune) if kernel_closure.prune is not None else None
    configs_module = None
    if kernel_closure.configs_module is not None:
        configs_module = MAIN if kernel_closure.configs_module is binding.module else \
            kernel_closure.configs_module.file.module_name
    unseen = ()
    if _heuristics_outside_the_autotuner(binding.resolved()):
        first = {}  # Triton's heuristics above @triton.autotune run before it gives a configuration's constants
        if not _heuristics_inside_the_autotuner(binding.resolved()):
            unseen = tuple(dict.fromkeys(name for config in given for name in config))
    source = KernelSource(
        kernel=binding.name, modules={name: text for name, (text, _) in modules.items()},
        origins={name: origins for name, (_, origins) in modules.items()}, params=params,
        constexprs=constexpr_params(binding), heuristics=tuple(kernel_closure.heuristics), configs=configs,
        configs_module=configs_module, prune=prune, config_problems=tuple(kernel_closure.config_problems),
        tuned=first, variants=tuple(variants), configured_blocks=_configured_blocks(puzzle, params, given),
        configs_computed=kernel_closure.configs is not None and not given,
        unseen_by_heuristics=unseen,
        host_code_at_launch=bool(kernel_closure.heuristics) or prune is not None or
        any(b.kind == "constexpr_function" for b in kernel_closure.bindings))
    return Loaded("found", source, file.name, notes=notes)


def _configured_blocks(puzzle, params, given):
    """{block: value} in the course's names of each distinct set of the puzzle's blocks the configurations give."""
    course_name = dict(zip(params, puzzle.params))
    return distinct_blocks(puzzle, [{course_name[name]: value for name, value in config.items() if name in course_name}
                                    for config in given])


def distinct_blocks(puzzle, configured):
    """Each distinct set of the puzzle's blocks among `configured` ({name in the course's names: value} of each
    configuration), for configuration cases (KernelSource.configured_blocks)."""
    distinct = []
    for config in configured:
        blocks = {name: value for name, value in config.items() if name in puzzle.blocks}
        if blocks and blocks not in distinct:
            distinct.append(blocks)
    return tuple(distinct)


def distinct_variants(first, others):
    """The constants among `others` that differ from `first` and from each other, in order: each a variant every
    case runs again with (KernelSource.variants)."""
    variants = []
    for values in others:
        if typed(values) != typed(first) and all(typed(values) != typed(other) for other in variants):
            variants.append(values)
    return variants


def starred_problem(puzzle, what, arguments):
    """Why a kernel with *args, **kwargs or keyword-only parameters cannot take the puzzle's launch, or None."""
    starred = [f"*{arguments.vararg.arg}"] if arguments.vararg else []
    starred += [a.arg for a in arguments.kwonlyargs] + ([f"**{arguments.kwarg.arg}"] if arguments.kwarg else [])
    if not starred:
        return None
    return (f"{what} has parameters after a `*` ({', '.join(starred)}): Triton 3.6 (the GPU stage's) cannot launch "
            "a kernel with *args, **kwargs or keyword-only parameters, and the grader passes the puzzle's arguments "
            f"by position. List every parameter by name, before any `*`: @triton.jit def {puzzle.signature()}.")


def signature_problem(puzzle, what, params, computed=(), defaults=()):
    """Why a kernel with these parameters cannot take the puzzle's launch, or None. The grader passes the
    puzzle's arguments by position; parameters after them must be computed by @triton.heuristics or have a
    default."""
    expected = f"the puzzle expects @triton.jit def {puzzle.signature()}"
    count = len(puzzle.params)
    extra = [p for p in params[count:] if p not in computed and p not in defaults]
    if len(params) < count or extra:
        return (f"{what} takes {len(params)} parameters ({', '.join(params)}) but the grader passes "
                f"{count}: {expected}.")
    return None
