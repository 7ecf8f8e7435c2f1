"""Read course.yml and check every entry, so a malformed course fails with the file, the key path and the fix."""
import ast
import math
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .settings import DEFAULT, Tolerance

ROLES = ("input", "output", "inout")
DTYPES = ("float32", "float16")
LAYOUTS = {  # how a case lays out the tensors marked strided, and how reports name it
    "contiguous": "contiguous",
    "split": "torch.split column views",
    "every_other_column": "strided slice parent[:, ::2]",
    "transposed": "transposed view",
    "transposed_every_other_column": "transposed strided slice parent[:, ::2].T (no stride of 1)",
    "offset": "view at a nonzero storage offset",
    "padded_rows": "rows of a wider parent, parent[..., :N]",
    "padded_planes": "matrices of a taller parent, parent[..., :M, :] (a gap between each matrix and the next)",
}
ORDERS = ("sequential", "shuffled")
EXPRESSION_BUILTINS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max,
                       "next_power_of_2": lambda n: 1 << max(0, int(n) - 1).bit_length()}


class CourseError(Exception):
    """course.yml is malformed: says where (file and key path) and what is wrong."""

    def __init__(self, file, key_path, message):
        self.file, self.key_path, self.message = str(file), key_path, message
        where = f"{self.file}: {key_path}: " if key_path else f"{self.file}: "
        super().__init__(where + message)


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple  # symbols (str) or fixed sizes (int)
    role: str
    strided: bool
    dtype: str = None  # a fixed dtype; None: the case's dtype
    init: object = None  # Expression computing an input from the other inputs, instead of random values

    @property
    def written(self):
        return self.role in ("output", "inout")

    def shape_at(self, sizes):
        """The shape with its symbols bound by `sizes`."""
        return tuple(sizes[d] if isinstance(d, str) else d for d in self.shape)


@dataclass(frozen=True)
class CaseSpec:
    name: str
    symbols: dict  # sizes and blocks, e.g. {"N": 1000, "BLOCK_SIZE": 256}
    dtype: str
    layout: str
    order: str
    split: tuple
    inputs: dict  # tensor name -> {"scale": s, "offset": o}: values are randn * scale + offset
    group: str = "all"  # the group of cases whose points it shares (partial credit)
    hidden: bool = False  # made at grading time from the instructor's seed; never shown to students
    contiguous: tuple = ()  # strided tensors kept contiguous in this case's layout (each stride its own tensor's)
    inputs_of: int = None  # the index of the case whose inputs it has (a case again at other blocks), or None

    def describe(self):
        if self.hidden:
            return ""
        sizes = ", ".join(f"{k}={v}" for k, v in self.symbols.items())
        extras = [self.dtype] + ([LAYOUTS[self.layout]] if self.layout != "contiguous" else [])
        if self.contiguous:
            extras.append(f"{' and '.join(self.contiguous)} contiguous")
        if self.order == "shuffled":
            extras.append("shuffled program order")
        for name, values in self.inputs.items():
            extras.append(f"{name} = randn * {values['scale']:g} + {values['offset']:g}")
        return f"{sizes} ({', '.join(extras)})"


@dataclass(frozen=True)
class Expression:
    source: str
    code: object

    def __call__(self, namespace):
        return eval(self.code, {"__builtins__": {}, **EXPRESSION_BUILTINS, "torch": _torch()}, namespace)


def _torch():
    import torch  # imported late: reading and listing a course does not need it
    return torch


@dataclass(frozen=True)
class Benchmark:
    """How the GPU stage times a puzzle: sizes past the L2 cache, the work done, the PyTorch baseline."""
    sizes: tuple  # {size symbol: value} per timed shape
    dtype: str
    config: dict  # block -> Expression (of the sizes), and num_warps, num_stages: the default launch
    bytes: object  # Expression: bytes a kernel must move at least (None: compute-bound puzzles)
    flops: object  # Expression: floating-point operations (None: memory-bound puzzles)
    baseline_source: str
    baseline: object  # PyTorch function of the inputs, in their own dtype, on the GPU

    def launch_config(self, config, sizes):
        """A submission's configuration ({"kwargs": blocks, "num_warps", "num_stages"}, any part missing)
        completed with this benchmark's default and evaluated at these sizes."""
        kwargs = {block: int(expression(sizes)) for block, expression in self.config.items()
                  if block not in ("num_warps", "num_stages")}
        kwargs.update(config.get("kwargs", {}))
        options = {k: int(self.config[k](sizes)) for k in ("num_warps", "num_stages") if k in self.config}
        options.update({k: config[k] for k in ("num_warps", "num_stages") if k in config})
        return {"kwargs": kwargs, **options}


@dataclass(frozen=True)
class Puzzle:
    id: str
    title: str
    notebook: Path
    solution: Path
    points: float
    kernel: str
    tensors: tuple  # TensorSpec, in declaration order
    reference_source: str
    reference: object  # the callable defined by reference_source
    args: dict  # kernel parameter -> Expression, in the kernel's parameter order
    blocks: tuple  # block sizes each case chooses (powers of 2)
    constexprs: tuple  # the parameters passed as compile-time constants (the blocks and any others)
    grid: tuple  # Expression per grid dimension
    cases: tuple  # CaseSpec
    tolerances: dict  # dtype -> Tolerance
    load_budget: dict  # tensor name -> Expression: the most elements a correct kernel loads from it
    groups: dict  # group name -> points; a group's points are earned when all of its cases pass
    benchmark: Benchmark = None  # the GPU stage's timing, if the puzzle has one
    fits: dict = None  # size -> block: the kernel holds the whole size in one block (softmax's row: BLOCK_N >= N)

    @property
    def params(self):
        return tuple(self.args)

    @property
    def size_symbols(self):
        return tuple(dict.fromkeys(s for t in self.tensors for s in t.shape if isinstance(s, str)))

    def signature(self):
        params = ", ".join(f"{p}: tl.constexpr" if p in self.constexprs else p for p in self.params)
        return f"{self.kernel}({params})"

    def __repr__(self):
        return f"Puzzle({self.id!r}, kernel={self.kernel!r}, {len(self.cases)} cases)"


@dataclass(frozen=True)
class Course:
    path: Path
    title: str
    puzzles: tuple
    entries: dict = field(default_factory=dict, repr=False, compare=False)  # puzzle id -> its entry, as read

    def text_for(self, puzzle_ids):
        """A course file of only these puzzles' entries: what a sandboxed worker reads of the course. It parses
        one puzzle, not the course, and its text stays the same while other puzzles' entries change."""
        return yaml.dump({"puzzles": [self.entries[i] for i in dict.fromkeys(puzzle_ids)]}, Dumper=YAML_DUMPER,
                         sort_keys=False)

    @property
    def root(self):
        return self.path.parent

    def puzzle(self, puzzle_id):
        for puzzle in self.puzzles:
            if puzzle.id == puzzle_id:
                return puzzle
        known = ", ".join(p.id for p in self.puzzles)
        raise KeyError(f"no puzzle {puzzle_id!r} in {self.path}; the puzzles are: {known}")

    def __repr__(self):
        return f"Course({str(self.path)!r}, {len(self.puzzles)} puzzles)"


# libyaml's safe loader where PyYAML was built with it: the same documents, parsed ten times as fast (a check
# reads the course every time; 0.3 s of a notebook's 1 s check with the pure-Python one).
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def default_course_path():
    """The course.yml of the checkout this package lives in."""
    return Path(__file__).resolve().parent.parent / "course.yml"


# CPython 3.11 counts the ast module's recursion per interpreter, not per thread: two threads that build or
# compile syntax trees at once can fail with "AST constructor recursion depth mismatch" (students graded in
# threads of one process, as a class's local cluster does). Whatever parses Python in the grader's process
# (the course's expressions, a submission's load stage) holds this lock; it takes milliseconds.
PARSING = threading.RLock()


def load_course(path=None, text=None):
    """The course of `path` (default: this checkout's course.yml). With `text`, the course is read from it, as
    a sandboxed process that cannot see the course's folder does: its notebooks and solutions are not looked for."""
    with PARSING:
        return _load_course(path, text)


def _load_course(path, text):
    path = Path(path) if path else default_course_path()
    if text is None:
        try:
            text = path.read_text()
        except OSError as error:
            raise CourseError(path, "", f"cannot read the course file ({error.strerror}); pass --course PATH") from None
    else:
        return _Reader(path, check_files=False).course(yaml.load(text, Loader=YAML_LOADER))
    try:
        data = yaml.load(text, Loader=YAML_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise CourseError(path, where, f"not valid YAML: {getattr(error, 'problem', error)}") from None
    return _Reader(path).course(data)


class _Reader:
    """Walks the parsed YAML keeping the key path, so each error says exactly where it is."""

    def __init__(self, path, check_files=True):
        self.path = path
        self.check_files = check_files

    def fail(self, key_path, message):
        raise CourseError(self.path, key_path, message)

    def mapping(self, value, key_path, required=(), optional=()):
        if not isinstance(value, dict):
            self.fail(key_path, f"expected a mapping, got {type(value).__name__}")
        for key in required:
            if key not in value:
                self.fail(key_path, f"missing key '{key}'")
        unknown = [k for k in value if k not in required and k not in optional]
        if unknown:
            allowed = ", ".join(list(required) + list(optional))
            self.fail(key_path, f"unknown key '{unknown[0]}' (allowed: {allowed})")
        return value

    def typed(self, value, kind, key_path, what):
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            self.fail(key_path, f"expected {what}, got {value!r}")
        return value

    def identifier(self, value, key_path):
        if not isinstance(value, str) or not value.isidentifier():
            self.fail(key_path, f"expected a Python identifier, got {value!r}")
        return value

    def course(self, data):
        data = self.mapping(data, "", required=("puzzles",), optional=("title",))
        puzzles = self.typed(data["puzzles"], list, "puzzles", "a list of puzzles")
        if not puzzles:
            self.fail("puzzles", "the course has no puzzles")
        parsed, entries = [], {}
        for index, entry in enumerate(puzzles):
            puzzle = self.puzzle(entry, f"puzzles[{index}]")
            if puzzle.id in entries:
                self.fail(f"puzzles[{index}] ({puzzle.id}).id", f"duplicate puzzle id '{puzzle.id}'")
            entries[puzzle.id] = entry
            parsed.append(puzzle)
        return Course(self.path, str(data.get("title", "Triton puzzles")), tuple(parsed), entries)

    def puzzle(self, entry, key_path):
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            key_path = f"{key_path} ({entry['id']})"
        entry = self.mapping(entry, key_path,
                             required=("id", "title", "notebook", "solution", "points", "kernel", "tensors",
                                       "reference", "launch", "cases"),
                             optional=("tolerance", "load_budget", "groups", "benchmark"))
        puzzle_id = entry["id"]
        if not isinstance(puzzle_id, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", puzzle_id):
            self.fail(f"{key_path}.id", f"expected lowercase letters, digits and '_', got {puzzle_id!r}")
        points = entry["points"]
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
            self.fail(f"{key_path}.points", f"expected a positive number, got {points!r}")
        tensors = self.tensors(entry["tensors"], f"{key_path}.tensors")
        sizes = tuple(dict.fromkeys(s for t in tensors for s in t.shape if isinstance(s, str)))
        launch = self.mapping(entry["launch"], f"{key_path}.launch", required=("args", "blocks", "grid"),
                              optional=("constexprs", "fits"))
        blocks = tuple(self.identifier(b, f"{key_path}.launch.blocks[{i}]")
                       for i, b in enumerate(self.typed(launch["blocks"], list, f"{key_path}.launch.blocks",
                                                        "a list of block-size names")))
        names = set(sizes) | set(blocks) | {t.name for t in tensors}
        args = self.typed(launch["args"], dict, f"{key_path}.launch.args", "a mapping of kernel parameters")
        if not args:
            self.fail(f"{key_path}.launch.args", "the kernel has no parameters")
        args = {self.identifier(param, f"{key_path}.launch.args"):
                self.expression(expr, names, f"{key_path}.launch.args.{param}") for param, expr in args.items()}
        for block in blocks:
            if block not in args:
                self.fail(f"{key_path}.launch.blocks", f"block '{block}' is not a kernel parameter in launch.args")
        extra = self.typed(launch.get("constexprs", []), list, f"{key_path}.launch.constexprs",
                           "a list of kernel parameters")
        for param in extra:
            if param not in args:
                self.fail(f"{key_path}.launch.constexprs", f"'{param}' is not a kernel parameter in launch.args")
        constexprs = tuple(p for p in args if p in blocks or p in extra)
        fits = self.typed(launch.get("fits", {}), dict, f"{key_path}.launch.fits", "a mapping of sizes to blocks")
        for size, block in fits.items():
            if size not in sizes or block not in blocks:
                self.fail(f"{key_path}.launch.fits", f"'{size}: {block}' must map a size of the puzzle to one of its "
                                                     f"blocks ({', '.join(blocks)})")
        grid = self.typed(launch["grid"], list, f"{key_path}.launch.grid", "a list of 1 to 3 expressions")
        if not 1 <= len(grid) <= 3:
            self.fail(f"{key_path}.launch.grid", f"a grid has 1 to 3 dimensions, got {len(grid)}")
        grid = tuple(self.expression(g, names, f"{key_path}.launch.grid[{i}]") for i, g in enumerate(grid))
        cases = self.typed(entry["cases"], list, f"{key_path}.cases", "a list of cases")
        if not cases:
            self.fail(f"{key_path}.cases", "the puzzle has no cases")
        has_strided = any(t.strided for t in tensors)
        groups = self.groups(entry.get("groups"), f"{key_path}.groups", points)
        cases = tuple(self.case(c, f"{key_path}.cases[{i}]", sizes, blocks, tensors, has_strided, groups)
                      for i, c in enumerate(cases))
        for index, case in enumerate(cases):
            for size, block in fits.items():
                held = max(case.split) if case.split else case.symbols[size]  # a split launches piece by piece
                if case.symbols[block] < held:
                    self.fail(f"{key_path}.cases[{index}] ({case.name})", f"{block}={case.symbols[block]} does not "
                                                                         f"hold {size}={held} (launch.fits)")
        for group in groups:
            if not any(c.group == group for c in cases):
                self.fail(f"{key_path}.groups", f"no case is in group '{group}'")
        return Puzzle(
            id=puzzle_id,
            title=self.typed(entry["title"], str, f"{key_path}.title", "a string"),
            notebook=self.course_file(entry["notebook"], f"{key_path}.notebook"),
            solution=self.course_file(entry["solution"], f"{key_path}.solution"),
            points=points,
            kernel=self.identifier(entry["kernel"], f"{key_path}.kernel"),
            tensors=tensors,
            reference_source=entry["reference"],
            reference=self.reference(entry["reference"], f"{key_path}.reference", tensors),
            args=args, blocks=blocks, constexprs=constexprs, grid=grid, cases=cases, fits=fits,
            tolerances=self.tolerances(entry.get("tolerance", {}), f"{key_path}.tolerance"),
            load_budget=self.load_budget(entry.get("load_budget", {}), f"{key_path}.load_budget", names, tensors),
            groups=groups,
            benchmark=self.benchmark(entry.get("benchmark"), f"{key_path}.benchmark", sizes, blocks, tensors),
        )

    def benchmark(self, value, key_path, sizes, blocks, tensors):
        if value is None:
            return None
        value = self.mapping(value, key_path, required=("sizes", "dtype", "config", "baseline"),
                             optional=("bytes", "flops"))
        shapes = self.typed(value["sizes"], list, f"{key_path}.sizes", "a list of {size: value}")
        for index, shape in enumerate(shapes):
            shape = self.mapping(shape, f"{key_path}.sizes[{index}]", required=sizes)
            for symbol, size in shape.items():
                if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                    self.fail(f"{key_path}.sizes[{index}].{symbol}", f"expected a positive integer, got {size!r}")
        if value["dtype"] not in ("float32", "float16", "bfloat16"):
            self.fail(f"{key_path}.dtype", f"expected float32, float16 or bfloat16, got {value['dtype']!r}")
        config = self.mapping(value["config"], f"{key_path}.config", required=blocks,
                              optional=("num_warps", "num_stages"))
        names = set(sizes)
        launch = {k: self.expression(v, names, f"{key_path}.config.{k}") for k, v in config.items()}
        if "bytes" not in value and "flops" not in value:
            self.fail(key_path, "give bytes (memory-bound) or flops (compute-bound): the physical floor needs one")
        work = {k: self.expression(value[k], names | {"itemsize"}, f"{key_path}.{k}") if k in value else None
                for k in ("bytes", "flops")}
        baseline = self.reference(value["baseline"], f"{key_path}.baseline", tensors)
        return Benchmark(tuple(dict(s) for s in shapes), value["dtype"], launch, work["bytes"], work["flops"],
                         value["baseline"], baseline)

    def groups(self, value, key_path, points):
        if value is None:
            return {"all": points}
        value = self.typed(value, dict, key_path, "a mapping of group names to points")
        for name, group_points in value.items():
            if isinstance(group_points, bool) or not isinstance(group_points, (int, float)) or group_points < 0:
                self.fail(f"{key_path}.{name}", f"expected a number of points, got {group_points!r}")
        if abs(sum(value.values()) - points) > 1e-9:
            self.fail(key_path, f"the groups' points add up to {sum(value.values()):g}, not to the puzzle's {points:g}")
        return dict(value)

    def load_budget(self, value, key_path, names, tensors):
        value = self.typed(value, dict, key_path, "a mapping of tensor names to expressions")
        inputs = {t.name for t in tensors if t.role in ("input", "inout")}
        for name in value:
            if name not in inputs:
                self.fail(key_path, f"{name!r} is not an input of this puzzle")
        return {name: self.expression(expr, names, f"{key_path}.{name}") for name, expr in value.items()}

    def course_file(self, value, key_path):
        self.typed(value, str, key_path, "a path relative to the course root")
        path = self.path.parent / value
        if self.check_files and not path.is_file():
            self.fail(key_path, f"{value} does not exist (paths are relative to {self.path.parent})")
        return path

    def tensors(self, value, key_path):
        value = self.typed(value, dict, key_path, "a mapping of tensor names to specs")
        if not value:
            self.fail(key_path, "the puzzle has no tensors")
        tensors = []
        for name, spec in value.items():
            where = f"{key_path}.{name}"
            self.identifier(name, key_path)
            spec = self.mapping(spec, where, required=("shape", "role"), optional=("strided", "dtype", "init"))
            shape = self.typed(spec["shape"], list, f"{where}.shape", "a list of size symbols or integers")
            if not shape:
                self.fail(f"{where}.shape", "a tensor needs at least one dimension")
            for i, dim in enumerate(shape):
                if not (isinstance(dim, str) and dim.isidentifier()
                        or isinstance(dim, int) and not isinstance(dim, bool) and dim > 0):
                    self.fail(f"{where}.shape[{i}]", f"expected a size symbol or a positive integer, got {dim!r}")
            if spec["role"] not in ROLES:
                self.fail(f"{where}.role", f"expected one of {', '.join(ROLES)}, got {spec['role']!r}")
            strided = self.typed(spec.get("strided", False), bool, f"{where}.strided", "true or false")
            dtype = spec.get("dtype")
            if dtype is not None and dtype not in DTYPES:
                self.fail(f"{where}.dtype", f"expected one of {', '.join(DTYPES)}, got {dtype!r}")
            tensors.append(TensorSpec(name, tuple(shape), spec["role"], strided, dtype, spec.get("init")))
        if not any(t.written for t in tensors):
            self.fail(key_path, "no tensor has role output or inout: there is nothing to check")
        inputs = {t.name for t in tensors if t.role == "input" and t.init is None}
        sizes = {s for t in tensors for s in t.shape if isinstance(s, str)}
        checked = []
        for tensor in tensors:
            if tensor.init is not None:
                if tensor.role != "input":
                    self.fail(f"{key_path}.{tensor.name}.init", "only an input can be computed from other inputs")
                init = self.expression(tensor.init, inputs | sizes | {"torch"}, f"{key_path}.{tensor.name}.init")
                tensor = TensorSpec(tensor.name, tensor.shape, tensor.role, tensor.strided, tensor.dtype, init)
            checked.append(tensor)
        return tuple(checked)

    def expression(self, source, names, key_path):
        if isinstance(source, bool) or not isinstance(source, (str, int, float)):
            self.fail(key_path, f"expected an expression, got {source!r}")
        source = str(source)
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError as error:
            self.fail(key_path, f"invalid expression {source!r}: {error.msg}")
        allowed = names | set(EXPRESSION_BUILTINS)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id not in allowed:
                self.fail(key_path, f"'{node.id}' in {source!r} is not a size, block or tensor of this puzzle "
                                    f"(known: {', '.join(sorted(allowed))})")
        return Expression(source, compile(tree, f"<{key_path}>", "eval"))

    def reference(self, source, key_path, tensors):
        self.typed(source, str, key_path, "the source of one Python function")
        try:
            tree = ast.parse(source)
        except SyntaxError as error:
            self.fail(key_path, f"line {error.lineno}: {error.msg}")
        functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
        if len(functions) != 1:
            self.fail(key_path, f"expected exactly one function definition, found {len(functions)}")
        expected = [t.name for t in tensors if t.role in ("input", "inout") and t.init is None]
        params = [a.arg for a in functions[0].args.args]
        if sorted(params) != sorted(expected):
            self.fail(key_path, f"the reference takes ({', '.join(params)}) but the puzzle's input and inout "
                                f"tensors (without those computed by init) are ({', '.join(expected)})")
        namespace = {"__builtins__": __builtins__, "math": math}
        import torch  # the reference is PyTorch code; imported here so that reading a course stays light
        namespace["torch"] = torch
        exec(compile(tree, f"<{key_path}>", "exec"), namespace)
        return namespace[functions[0].name]

    def case(self, entry, key_path, sizes, blocks, tensors, has_strided, groups):
        symbols = list(sizes) + list(blocks)
        entry = self.mapping(entry, key_path, required=["name"] + symbols,
                             optional=("dtype", "layout", "order", "split", "inputs", "group", "contiguous"))
        name = self.typed(entry["name"], str, f"{key_path}.name", "a string")
        key_path = f"{key_path} ({name})"
        values = {}
        for symbol in symbols:
            value = entry[symbol]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                self.fail(f"{key_path}.{symbol}", f"expected a positive integer, got {value!r}")
            if symbol in blocks and value & (value - 1):
                self.fail(f"{key_path}.{symbol}", f"block sizes must be powers of 2 (tl.arange), got {value}")
            values[symbol] = value
        dtype = entry.get("dtype", "float32")
        if dtype not in DTYPES:
            self.fail(f"{key_path}.dtype", f"expected one of {', '.join(DTYPES)} (bfloat16 arithmetic is wrong "
                                           f"in the interpreter), got {dtype!r}")
        layout = entry.get("layout", "contiguous")
        if layout not in LAYOUTS:
            self.fail(f"{key_path}.layout", f"expected one of {', '.join(LAYOUTS)}, got {layout!r}")
        if layout != "contiguous" and not has_strided:
            self.fail(f"{key_path}.layout", "a non-contiguous layout needs a tensor marked strided: true")
        least = 3 if layout == "padded_planes" else 2
        if layout != "contiguous" and layout != "offset":
            for t in tensors:
                if t.strided and len(t.shape) < least:
                    self.fail(f"{key_path}.layout", f"layout {layout} needs strided tensors of {least} or more "
                                                    f"dimensions; {t.name} has {len(t.shape)}")
        split = entry.get("split")
        if layout == "split":
            columns = {values.get(t.shape[-1], t.shape[-1]) for t in tensors if t.strided}
            if (not isinstance(split, list) or len(split) < 2
                    or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in split)):
                self.fail(f"{key_path}.split", f"layout split needs split: a list of at least two column widths, "
                                               f"got {split!r}")
            if columns != {sum(split)}:
                self.fail(f"{key_path}.split", f"the widths {split} add up to {sum(split)}, not to the "
                                               f"{sorted(columns)} columns of the strided tensors")
        elif split is not None:
            self.fail(f"{key_path}.split", "split is only used with layout: split")
        contiguous = entry.get("contiguous", [])
        strided = [t.name for t in tensors if t.strided]
        if not isinstance(contiguous, list) or not all(name in strided for name in contiguous):
            self.fail(f"{key_path}.contiguous", f"expected a list of the puzzle's strided tensors "
                                                f"({', '.join(strided)}), got {contiguous!r}")
        if contiguous and layout in ("contiguous", "split"):
            self.fail(f"{key_path}.contiguous", f"keeps tensors contiguous in a strided layout; layout {layout} "
                                                "has none to keep (split launches once per piece of every tensor)")
        order = entry.get("order", "sequential")
        if order not in ORDERS:
            self.fail(f"{key_path}.order", f"expected one of {', '.join(ORDERS)}, got {order!r}")
        inputs = {}
        random_inputs = {t.name for t in tensors if t.role in ("input", "inout") and t.init is None}
        for tensor_name, spec in self.typed(entry.get("inputs", {}), dict, f"{key_path}.inputs",
                                            "a mapping of input names to {scale, offset}").items():
            if tensor_name not in random_inputs:
                self.fail(f"{key_path}.inputs", f"{tensor_name!r} is not a random input of this puzzle "
                                                f"({', '.join(sorted(random_inputs))})")
            spec = self.mapping(spec, f"{key_path}.inputs.{tensor_name}", optional=("scale", "offset"))
            for key in spec:
                if isinstance(spec[key], bool) or not isinstance(spec[key], (int, float)):
                    self.fail(f"{key_path}.inputs.{tensor_name}.{key}", f"expected a number, got {spec[key]!r}")
            inputs[tensor_name] = {"scale": float(spec.get("scale", 1)), "offset": float(spec.get("offset", 0))}
        group = entry.get("group", "all" if list(groups) == ["all"] else None)
        if group not in groups:
            self.fail(f"{key_path}.group", f"expected one of the puzzle's groups ({', '.join(groups)}), "
                                           f"got {group!r}")
        return CaseSpec(name, values, dtype, layout, order, tuple(split or ()), inputs, group,
                        contiguous=tuple(contiguous))

    def tolerances(self, value, key_path):
        value = self.typed(value, dict, key_path, "a mapping of dtype to {atol, rtol}")
        tolerances = dict(DEFAULT.tolerances)
        for dtype, spec in value.items():
            if dtype not in DTYPES:
                self.fail(key_path, f"unknown dtype {dtype!r}")
            spec = self.mapping(spec, f"{key_path}.{dtype}", required=("atol", "rtol"))
            for key in ("atol", "rtol"):
                if isinstance(spec[key], bool) or not isinstance(spec[key], (int, float)) or spec[key] < 0:
                    self.fail(f"{key_path}.{dtype}.{key}", f"expected a non-negative number, got {spec[key]!r}")
            tolerances[dtype] = Tolerance(float(spec["atol"]), float(spec["rtol"]))
        return tolerances


GUESSABLE_SEEDS = 2 ** 32  # a student holding the grader can try every seed below this in an afternoon


def new_hidden_seed():
    """A seed for the hidden cases that no student can guess (63 random bits)."""
    import secrets
    return secrets.randbits(63)


def guessable_seed(seed):
    """Why `seed` does not keep the hidden cases hidden, or None: with the grader, a student can make the hidden
    cases of any seed they can guess, so a small one (or one from an example) hides nothing."""
    if seed is not None and -GUESSABLE_SEEDS < seed < GUESSABLE_SEEDS:
        return (f"the hidden seed {seed} is small enough to guess: a student with the grader can make the hidden "
                f"cases of every seed under {GUESSABLE_SEEDS:,}; use a random one, such as {new_hidden_seed()}")
    return None


# "large matrices (blocks BLOCK_M=128, BLOCK_N=256)": a public case again at a tuning configuration's blocks
CONFIGURATION_CASE = re.compile(r"(?P<base>.*) \(blocks (?P<blocks>\w+=\d+(?:, \w+=\d+)*)\)")
CONFIGURED_BLOCK_MAX = 2 ** 16
CONFIGURED_TILE_ELEMENTS = 2 ** 22  # the most elements the blocks of one configuration case multiply to
# The most configuration cases a check on the CPU runs, one a distinct set of blocks (Triton's tutorials tune over
# eight to a few dozen; a comprehension over four values of each of three blocks gives 64). Each costs tens of
# milliseconds (few programs: the case is small and the blocks large); the GPU stage verifies every configuration it
# times.
CONFIGURATION_CASES_CHECKED = 64


def with_configuration_cases(puzzle, configured_blocks=(), tuned=False, limit=None):
    """The puzzle with its public case of the largest output again at the blocks the GPU stage may launch the
    kernel with: the benchmark's default configuration's and each of `configured_blocks` ({block: value}, a
    submission's tuning configurations', in the course's names, each completed with the default's as the GPU
    stage completes it). `tuned`: the kernel has tuning configurations, so the GPU stage launches those alone,
    not the default. `limit`: the most cases added (the first configurations'). A kernel right at the cases'
    blocks and wrong at those (a tile size the cases never use, a shortcut taken only there) fails here, not only
    on a GPU that times it. Given the cases it added, it adds nothing more.

    A block that holds a whole size (`launch.fits`) keeps the case's own value; blocks that are not powers of 2,
    or too large to interpret, are not run (the GPU stage refuses them, or its compiler does)."""
    public = [index for index, spec in enumerate(puzzle.cases) if not spec.hidden and spec.layout != "split"]
    if puzzle.benchmark is None or not public:
        return puzzle
    outputs = [tensor for tensor in puzzle.tensors if tensor.role == "output"]
    # The case with the largest output: the most programs at large blocks (the longest loop would cost the most)
    base_index = max(public, key=lambda i: sum(math.prod(t.shape_at(puzzle.cases[i].symbols)) for t in outputs))
    base = puzzle.cases[base_index]
    held = set((puzzle.fits or {}).values())
    default = {block: int(expression(dict(base.symbols))) for block, expression in puzzle.benchmark.config.items()
               if block in puzzle.blocks}
    # The base's blocks, and those it already runs again at (the puzzle may have been given configurations before)
    added, seen = [], {tuple(spec.symbols[b] for b in puzzle.blocks) for index, spec in enumerate(puzzle.cases)
                       if index == base_index or spec.inputs_of == base_index}
    for blocks in [*([] if tuned else [{}]), *configured_blocks]:
        if len(added) == limit:
            break
        symbols = dict(base.symbols) | {b: v for b, v in (default | blocks).items() if b in puzzle.blocks and
                                        b not in held}
        values = [symbols[b] for b in puzzle.blocks]
        key = tuple(values)
        if key in seen or not all(type(v) is int and 0 < v <= CONFIGURED_BLOCK_MAX and not v & (v - 1)
                                  for v in values) or math.prod(values) > CONFIGURED_TILE_ELEMENTS:
            continue
        seen.add(key)
        shown = ", ".join(f"{b}={symbols[b]}" for b in puzzle.blocks)
        added.append(CaseSpec(f"{base.name} (blocks {shown})", symbols, base.dtype, base.layout, base.order,
                              base.split, base.inputs, base.group, contiguous=base.contiguous, inputs_of=base_index))
    from dataclasses import replace
    return replace(puzzle, cases=puzzle.cases + tuple(added)) if added else puzzle


def configuration_case_base(name):
    """The name of the public case a configuration case runs again, or None for any other name."""
    found = CONFIGURATION_CASE.fullmatch(name)
    return found.group("base") if found else None


def with_hidden_cases(puzzle, seed):
    """The puzzle with cases its students never saw added: each public case again with other sizes and inputs.

    Sizes that the kernel receives as compile-time constants (a head dimension) and the widths of split
    layouts stay as they are; every other size is scaled by a random factor from the instructor's seed, and a
    block that must hold a whole size (`launch.fits`) grows with it. Their programs run in a shuffled order.
    """
    import random
    rng = random.Random(f"{puzzle.id}/{seed}")
    fixed = {expression.source for param, expression in puzzle.args.items() if param in puzzle.constexprs}
    hidden = []
    for spec in puzzle.cases:
        if spec.layout == "split":
            continue
        symbols = dict(spec.symbols)
        for symbol in puzzle.size_symbols:
            if symbol not in fixed:
                symbols[symbol] = max(1, round(symbols[symbol] * rng.uniform(0.6, 1.7)) + rng.choice((0, 1)))
        for size, block in (puzzle.fits or {}).items():  # a size the kernel holds in one block still fits in one
            symbols[block] = max(symbols[block], EXPRESSION_BUILTINS["next_power_of_2"](symbols[size]))
        # Programs in a shuffled order, whatever the public case's: a kernel that builds on what earlier programs
        # stored only for some sizes or dtypes would otherwise meet the one shuffled public case nowhere it does.
        hidden.append(CaseSpec(f"hidden case {len(hidden) + 1}", symbols, spec.dtype, spec.layout, "shuffled",
                               spec.split, spec.inputs, spec.group, hidden=True, contiguous=spec.contiguous))
    from dataclasses import replace
    return replace(puzzle, cases=puzzle.cases + tuple(hidden))
