"""Check correct kernels against PyTorch outside the grader: Triton's own interpreter, no memory checker,
none of the grader's code.

    python tests/alternatives/against_pytorch.py [FILE ...]   (default: every alternative)

Each file (a .py module run statement by statement, or a notebook whose cells are run in order, errors and
all, as Jupyter would) is run with TRITON_INTERPRET=1 set before triton is imported. Its puzzle is the name
of its folder; the kernel is launched on every case of that puzzle in course.yml (except split layouts, which
take one launch per piece) with the launch course.yml describes, and what it writes is compared with
course.yml's PyTorch reference at the course's tolerances. Prints a line per file and exits 1 when any kernel
is wrong.

Triton's interpreter gets a few valid kernels wrong, so this runs it with six small corrections of its own
(`correct_the_interpreter`): a `range` or `tl.range` loop's variable with a tensor's .to() (compiled, it is an
integer tensor; `row.to(tl.int64)` in a grid-stride loop), a driver and torch.cuda queries that answer on a machine without a GPU, as the GPU
stage's H200 (a tutorial's `DEVICE = triton.runtime.driver.active.get_active_torch_device()`, a pruner's
`torch.cuda.get_device_properties(0).multi_processor_count`), comparisons typed as booleans (a scalar
comparison broadcast into a mask otherwise becomes int32, which `tl.load` refuses), libdevice functions
(`triton.language.extra.libdevice` and its `cuda` module) run as the triton.language function of the same name
(the interpreter has none), triton.language functions a
kernel imports by name (`from triton.language import load`) interpreted like `tl.load`, and the reflected
operators tl.constexpr lacks (`BLOCK >> LOG2` with a constexpr module constant).
"""
import os

os.environ["TRITON_INTERPRET"] = "1"

import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import yaml  # noqa: E402

HERE = Path(__file__).resolve().parent
COURSE = yaml.safe_load((HERE.parent.parent / "course.yml").read_text())
PUZZLES = {p["id"]: p for p in COURSE["puzzles"]}
BUILTINS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max,
            "next_power_of_2": lambda n: 1 << max(0, int(n) - 1).bit_length()}
DTYPES = {"float32": torch.float32, "float16": torch.float16}
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (1e-3, 1e-3)}


def correct_the_interpreter():
    import types

    import numpy as np
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice
    from triton.language.extra.cuda import libdevice as cuda_libdevice
    from triton.runtime import interpreter

    # The GPU stage's H200, as its driver and torch.cuda describe it (bench/results/gpu-h200-device-properties.md).
    properties = {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132, "warpSize": 32}
    driver = types.SimpleNamespace(get_active_torch_device=lambda: torch.device("cpu"),
                                   get_current_target=lambda: types.SimpleNamespace(backend="cuda", arch=90),
                                   get_current_device=lambda: 0,
                                   utils=types.SimpleNamespace(get_device_properties=lambda device: dict(properties)))
    type(triton.runtime.driver).active = property(lambda self: driver)
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
        name="NVIDIA H200", major=9, minor=0, multi_processor_count=132, regs_per_multiprocessor=65536,
        shared_memory_per_block_optin=232448, warp_size=32)
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
    for name in dir(interpreter.InterpreterBuilder):
        if name.startswith(("create_icmp", "create_fcmp")):
            def boolean(self, lhs, rhs, compare=getattr(interpreter.InterpreterBuilder, name)):
                handle = compare(self, lhs, rhs)
                return interpreter.TensorHandle(np.asarray(handle.data).astype(np.bool_), tl.int1)
            setattr(interpreter.InterpreterBuilder, name, boolean)
    aliases = {"fast_expf": "exp", "fast_exp2f": "exp2", "fast_logf": "log", "fast_log2f": "log2"}
    for module in (libdevice, cuda_libdevice):
        for name in dir(module):
            target = aliases.get(name, name)
            if not name.startswith("_") and hasattr(tl.math, target):
                setattr(module, name, lambda *args, _target=target, **kwargs: getattr(tl.math, _target)(*args))
    patch_language = interpreter._patch_lang

    class LoopIndex(int):
        def to(self, dtype, *args, **kwargs):
            return tl.full([], int(self), tl.int32 if -2 ** 31 <= self < 2 ** 31 else tl.int64).to(dtype, *args,
                                                                                                  **kwargs)

    def patch_with_imported_names(fn):
        originals = {name: getattr(tl, name) for name in dir(tl) if not name.startswith("_")}
        scope = patch_language(fn)
        interpreted_range = tl.range
        scope.set_attr(tl, "range", lambda *args, **kwargs: map(LoopIndex, interpreted_range(*args, **kwargs)))
        fn.__globals__.setdefault("range", lambda *args: map(LoopIndex, range(*args)))
        for name, value in list(fn.__globals__.items()):
            if name in originals and value is originals[name] and getattr(tl, name) is not value:
                fn.__globals__[name] = getattr(tl, name)
        return scope
    interpreter._patch_lang = patch_with_imported_names
    import operator
    for name, operation in (("__rmod__", operator.mod), ("__rlshift__", operator.lshift),
                            ("__rrshift__", operator.rshift), ("__rand__", operator.and_), ("__rxor__", operator.xor)):
        if not hasattr(tl.constexpr, name):
            setattr(tl.constexpr, name, lambda self, other, _op=operation: tl.constexpr(_op(other, self.value)))


def alternatives():
    return sorted(p for p in HERE.glob("*/*") if p.suffix in (".py", ".ipynb") and p.parent.name in PUZZLES)


def load_kernel(path, name):
    """The kernel `name` defined by a .py file or by a notebook run cell by cell."""
    if path.suffix == ".py":  # statement by statement: its host code may fail on a machine without a GPU
        import ast
        namespace = {"__name__": f"alternative_{path.stem}", "__file__": str(path)}
        for statement in ast.parse(path.read_text()).body:
            try:
                exec(compile(ast.Module([statement], []), str(path), "exec"), namespace)
            except Exception:
                pass
        return namespace[name]
    from IPython.core.inputtransformer2 import TransformerManager
    namespace = {"__name__": "__main__"}
    notebook = json.loads(path.read_text())
    directory = Path(tempfile.mkdtemp())
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "grader" in source or "check(" in source:
            continue  # the notebook's own check cells: this is the check outside the grader
        code = TransformerManager().transform_cell(source)
        if "get_ipython()" in code:  # magics: only %%time and %%capture bodies are Python that defines things
            code = "\n".join(line for line in code.splitlines() if "get_ipython()" not in line)
            if source.lstrip().startswith(("%%time", "%%capture")):
                code = source.split("\n", 1)[1]
        cell_file = directory / f"cell_{number}.py"  # Triton reads kernels' source from a file
        cell_file.write_text(code)
        try:
            exec(compile(code, str(cell_file), "exec"), namespace)
        except Exception:  # a failing cell, as a notebook run with errors allowed
            pass
    return namespace[name]


def make_tensor(spec, case, dtype, generator):
    """The tensor of a case as the kernel sees it, in the case's layout when the tensor is strided."""
    symbols = {k: v for k, v in case.items() if isinstance(v, int)}
    shape = [symbols[d] if isinstance(d, str) else d for d in spec["shape"]]
    dtype = DTYPES[spec.get("dtype", dtype)]
    layout = case.get("layout", "contiguous") if spec.get("strided") else "contiguous"
    values = case.get("inputs", {})
    def fill(tensor):
        scale = values.get(spec["name"], {}).get("scale", 1.0)
        offset = values.get(spec["name"], {}).get("offset", 0.0)
        tensor.copy_((torch.randn(tensor.shape, generator=generator, dtype=torch.float64) * scale + offset).to(dtype))
        return tensor
    if layout == "transposed":
        return fill(torch.empty(shape[:-2] + [shape[-1], shape[-2]], dtype=dtype)).transpose(-1, -2)
    if layout == "every_other_column":
        return fill(torch.empty(shape[:-1] + [2 * shape[-1]], dtype=dtype))[..., ::2]
    if layout == "transposed_every_other_column":
        return fill(torch.empty(shape[:-2] + [shape[-1], 2 * shape[-2]], dtype=dtype))[..., ::2].transpose(-1, -2)
    if layout == "padded_rows":
        return fill(torch.empty(shape[:-1] + [shape[-1] + 8], dtype=dtype))[..., :shape[-1]]
    if layout == "offset":
        return fill(torch.empty(math.prod(shape) + 5, dtype=dtype))[5:].view(shape)
    return fill(torch.empty(shape, dtype=dtype))


def check_case(kernel, puzzle, case, seed, tuned=None):
    generator = torch.Generator().manual_seed(seed)
    dtype = case.get("dtype", "float32")
    tensors = {}
    for name, spec in puzzle["tensors"].items():
        tensors[name] = make_tensor({**spec, "name": name}, case, dtype, generator)
    symbols = {k: v for k, v in case.items() if isinstance(v, int) and not isinstance(v, bool)}
    for name, spec in puzzle["tensors"].items():
        if "init" in spec:
            tensors[name].copy_(eval(spec["init"], {"torch": torch}, {**symbols, **{
                n: t.double() for n, t in tensors.items() if "init" not in puzzle["tensors"][n]}}))
        if spec["role"] == "output":
            tensors[name].fill_(float("nan"))
    namespace = {**BUILTINS, **symbols, **tensors}
    args = [eval(str(expression), {"__builtins__": {}}, namespace) for expression in puzzle["launch"]["args"].values()]
    grid = tuple(int(eval(str(g), {"__builtins__": {}}, namespace)) for g in puzzle["launch"]["grid"])
    reference = {}
    exec(puzzle["reference"], {"torch": torch, "math": math}, reference)
    inputs = {n: t.double().clone() for n, t in tensors.items()
              if puzzle["tensors"][n]["role"] in ("input", "inout") and "init" not in puzzle["tensors"][n]}
    expected = next(iter(reference.values()))(**inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    if callable(tuned):
        tuned = tuned(args)
    # By the kernel's own parameter names (in the puzzle's order): a block a heuristic sets is overwritten, as
    # Triton's Heuristics.run overwrites a keyword (passed by position, it would be given twice).
    kernel[grid](**dict(zip(kernel.arg_names, args)), **(tuned or {}))
    written = [n for n, s in puzzle["tensors"].items() if s["role"] in ("output", "inout")]
    tolerance = puzzle.get("tolerance", {}).get(dtype, {})
    atol, rtol = tolerance.get("atol", TOLERANCES[dtype][0]), tolerance.get("rtol", TOLERANCES[dtype][1])
    for name, value in zip(written, expected):
        torch.testing.assert_close(tensors[name].double(), value.double(), atol=atol, rtol=rtol,
                                   msg=lambda m: f"case '{case['name']}', {name}: {m}")


def check_file(path):
    import triton
    from triton.runtime.autotuner import Autotuner, Heuristics
    puzzle = PUZZLES[path.parent.name]
    tuners = []

    def without_autotuning(kernel):
        """The case chooses the blocks, as a launch without autotuning does; heuristics stay, above or below."""
        if isinstance(kernel, Autotuner):
            tuners.append(kernel)
            return without_autotuning(kernel.fn)
        if isinstance(kernel, Heuristics):
            kernel.fn = without_autotuning(kernel.fn)
        return kernel
    kernel = without_autotuning(load_kernel(path, puzzle["kernel"]))

    def tuned(args):
        """A parameter of the kernel's own only its configurations give takes the first configuration's value, of
        those an early_config_prune keeps for the launch's arguments (the ones a launch passes: not the blocks)."""
        constants = {}
        for tuner in tuners:
            passed = tuner.arg_names[:len(puzzle["launch"]["args"])]  # the puzzle's, by position
            configured = {k for config in tuner.configs for k in config.kwargs}
            given = dict(zip(tuner.arg_names, args))
            # Each configuration at the case's blocks, which the case chooses
            configs = [triton.Config({**config.kwargs, **{k: given[k] for k in config.kwargs if k in passed}},
                                     num_warps=config.num_warps, num_stages=config.num_stages)
                       for config in tuner.configs]
            if tuner.early_config_prune:
                configs = tuner.early_config_prune(configs, {k: v for k, v in given.items() if k not in configured})
            constants.update({k: v for k, v in configs[0].kwargs.items() if k not in passed})
        return constants
    checked = 0
    for index, case in enumerate(puzzle["cases"]):
        if case.get("layout") == "split":
            continue
        check_case(kernel, puzzle, case, seed=index, tuned=tuned)
        checked += 1
    return checked


def main(paths):
    correct_the_interpreter()
    failures = 0
    for path in paths:
        path = Path(path).resolve()
        try:
            checked = check_file(path)
            print(f"ok    {path.parent.name}/{path.name}: {checked} cases match PyTorch")
        except Exception as error:
            failures += 1
            print(f"WRONG {path.parent.name}/{path.name}: {type(error).__name__}: {error}")
            traceback.print_exc(limit=2, file=sys.stdout)
    print(f"{len(paths) - failures} of {len(paths)} kernels match PyTorch in Triton's own interpreter")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or alternatives()))
