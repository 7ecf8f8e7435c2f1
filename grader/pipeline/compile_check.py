"""Compile kernels for real NVIDIA targets on a machine without a GPU, and say where the compiler objects.

The interpreter runs plain Python, so it accepts what the GPU compiler rejects: an import or a torch call
inside a kernel, a block size that is not a tl.constexpr, a tl.dot on blocks smaller than 16.
`triton.compile` needs no GPU to produce PTX. It runs in the sandboxed worker, before interpretation.
"""
import ast
import importlib.util
import inspect
import re
import sys
import textwrap

from .interpret import python_function


def compile_arguments(puzzle):
    """What the first case passes to each parameter: a pointer type for tensors, else the value."""
    from .cases import make_case
    launch = make_case(puzzle, 0).launches[0]
    return _as_compile_arguments(puzzle, launch.args)


def benchmark_arguments(puzzle, config):
    """What the GPU stage's timed launch at the first benchmark size passes to each parameter, with `config`
    (Benchmark.launch_config) for the blocks: a pointer type for tensors, else the value."""
    import torch

    benchmark = puzzle.benchmark
    sizes = dict(benchmark.sizes[0])
    tensors = {t.name: torch.empty(t.shape_at(sizes), dtype=getattr(torch, t.dtype or benchmark.dtype), device="meta")
               for t in puzzle.tensors}
    namespace = {**sizes, **config["kwargs"], **tensors}
    return _as_compile_arguments(puzzle, [expression(namespace) for expression in puzzle.args.values()])


def _as_compile_arguments(puzzle, values):
    import torch

    pointer = {torch.float32: "*fp32", torch.float16: "*fp16", torch.bfloat16: "*bf16"}
    return [(param, pointer[value.dtype] if isinstance(value, torch.Tensor) else value)
            for param, value in zip(puzzle.params, values)]


def signature(fn, arguments):
    """Triton signature, constexprs and attributes as a real launch makes them: constexpr where the kernel
    says so, an int equal to 1 folded in as a constant, ints divisible by 16 marked so, and pointers marked
    16-byte aligned, as fresh allocations are (a view with a storage offset may not be), which lets the
    compiler vectorise."""
    from .interpret import constexpr_params
    constexprs = constexpr_params(fn)
    types, values, attrs = {}, {}, {}
    for index, ((_, value), param) in enumerate(zip(arguments, inspect.signature(fn).parameters)):
        if param in constexprs or (type(value) is int and value == 1):
            types[param], values[param] = "constexpr", value
        elif isinstance(value, str):
            types[param] = value
            attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, float):
            types[param] = "fp32"
        else:
            types[param] = "i32" if -2 ** 31 <= value < 2 ** 31 else "i64"
            if value % 16 == 0:
                attrs[(index,)] = [["tt.divisibility", 16]]
    return types, values, attrs


def compile_problems(path, kernel, arguments, targets):
    """[{"targets", "message", "line"}] for the targets the kernel in module `path` does not compile for;
    `line` is a line of that module, or None."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    failures = {}
    for target in targets:
        # A fresh module for each target: after one failed compile, Triton lets the same kernel object
        # compile "successfully" (seen with a torch call inside a kernel on 3.9).
        name = f"{path.stem}_sm{target}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        jit_function = getattr(module, kernel)
        types, constexprs, attrs = signature(python_function(jit_function), arguments)
        source = ASTSource(fn=jit_function, signature=types, constexprs=constexprs, attrs=attrs)
        try:
            triton.compile(source, target=GPUTarget("cuda", target, 32))
        except Exception as error:
            failures.setdefault(_describe(error, module), []).append(target)
    return [{"targets": targets, "message": message, "line": line} for (message, line), targets in failures.items()]


def _describe(error, module):
    """(message, module line) of a compile error."""
    text = str(error)
    message = getattr(error, "error_message", None) or text.strip().splitlines()[-1]
    message = re.sub(r" at 0x[0-9a-f]+", "", message)
    location = re.match(r"at (\d+):(\d+):", text)
    if location and getattr(error, "src", None):
        for value in vars(module).values():
            fn = python_function(value)
            if fn is not None and _source(fn) == error.src:
                return message, _def_line(fn) + int(location.group(1)) - 1
    return message, _host_call(module, text)


def _def_line(fn):
    lines, first = inspect.getsourcelines(fn)
    return first + ast.parse(textwrap.dedent("".join(lines))).body[0].lineno - 1


def _source(fn):
    """The function's source from its `def` line on, as Triton keeps it."""
    text = textwrap.dedent(inspect.getsource(fn))
    return "\n".join(text.splitlines()[ast.parse(text).body[0].lineno - 1:]) + "\n"


def _host_call(module, text):
    """For 'Unsupported function referenced': the first kernel line calling into a module other than triton."""
    if "Unsupported function referenced" not in text:
        return None
    hosts = {name for name, value in vars(module).items()
             if inspect.ismodule(value) and value.__name__.split(".")[0] != "triton"}
    for value in vars(module).values():
        fn = python_function(value)
        if fn is None:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        first = _def_line(fn) - tree.body[0].lineno
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in hosts:
                return first + node.lineno
    return None
