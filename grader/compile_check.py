"""Compile kernels for real NVIDIA targets on a machine without a GPU, and map rejections to the student's line.

The interpreter runs plain Python, so it accepts what the GPU compiler rejects: an import or a torch
call inside a kernel, a block size that is not a tl.constexpr, ... `triton.compile` needs no GPU to
produce PTX. It runs in a child process, started before interpretation so both use a core each: there
Triton is imported without TRITON_INTERPRET, so helpers are real @jit functions whatever mode the
grader's process is in, and a compiler crash cannot take the grader down.
"""
import ast
import inspect
import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from .diagnose import hint
from .interpret import python_function
from .results import Diagnostic

def kernel_module(kernel):
    """Source of a module with the kernel, the @jit helpers and the globals it can see, and where each came from."""
    fn = python_function(kernel)
    lines = ["import triton", "import triton.language as tl"]
    origins = {}
    for name, value in list(fn.__globals__.items()):
        if name.startswith("__"):
            continue
        if inspect.ismodule(value):
            lines += ["try:", f"    import {value.__name__} as {name}", "except ImportError:", "    pass"]
        elif type(value).__name__ == "constexpr":
            lines.append(f"{name} = tl.constexpr({value.value!r})")
        elif isinstance(value, (bool, int, float)):
            lines.append(f"{name} = {value!r}")
        elif python_function(value) is None and callable(value) and getattr(value, "__module__", "").startswith(
                "triton") and hasattr(value, "__name__"):
            lines += ["try:", f"    from {value.__module__} import {value.__name__} as {name}",
                      "except ImportError:", "    pass"]
    for name, value in list(fn.__globals__.items()):
        helper = python_function(value)
        if helper is None or helper.__name__ != name:
            continue
        try:
            source_lines, first_line = inspect.getsourcelines(helper)
        except (OSError, TypeError):
            continue
        text = textwrap.dedent("".join(source_lines))
        def_line = ast.parse(text).body[0].lineno  # the decorators come before it
        lines += ["", "@triton.jit"] + text.splitlines()[def_line - 1:]
        origins[name] = (helper.__code__.co_filename, first_line + def_line - 1)
    return "\n".join(lines) + "\n", origins


def compile_signature(puzzle):
    """Triton signature and constexprs of the puzzle's first case, from the arguments the grader passes."""
    import torch

    from .cases import make_case
    pointer = {torch.float32: "*fp32", torch.float16: "*fp16"}
    launch = make_case(puzzle, 0).launches[0]
    signature, constexprs = {}, {}
    for param, value in zip(puzzle.params, launch.args):
        if param in puzzle.constexprs:
            signature[param], constexprs[param] = "constexpr", value
        elif isinstance(value, torch.Tensor):
            signature[param] = pointer[value.dtype]
        elif isinstance(value, float):
            signature[param] = "fp32"
        else:
            signature[param] = "i32" if -2 ** 31 <= value < 2 ** 31 else "i64"
    return signature, constexprs


class CompileJob:
    def __init__(self, process, origins, describe, timeout):
        self.process, self.origins, self.describe, self.timeout = process, origins, describe, timeout

    def results(self):
        """puzzle id -> list of compile problems (empty when every target compiled)."""
        try:
            stdout, stderr = self.process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            stdout, stderr = self.process.communicate()
        problems = {}
        for line in stdout.splitlines():
            item = json.loads(line)
            problems.setdefault(item["puzzle"], [])
            if item.get("error"):
                problems[item["puzzle"]].append(self._explain(item))
        return problems

    def _explain(self, item):
        where = ""
        origin = self.origins[item["puzzle"]].get(item.get("function"))
        if origin and item.get("line"):
            filename, def_line = origin
            line = def_line + item["line"] - 1
            where = f" at {self.describe[item['puzzle']](filename, line)}: {linecache.getline(filename, line).strip()}\n"
        else:
            where = ": "
        targets = " and ".join(f"sm_{t}" for t in item["targets"])
        error = re.sub(r" at 0x[0-9a-f]+", "", item["error"])
        return f"the GPU compiler ({targets}) rejects the kernel{where}{error}{hint(error)}"


def apply(result, problems):
    """A kernel that passed on the CPU but that the GPU compiler rejects fails, with the compiler's reasons."""
    if problems:
        result.status, result.points = "fail", 0
        result.diagnostics += [Diagnostic("compile", problem) for problem in problems]


def start(items, settings):
    """Start compiling [(puzzle, kernel, describe_line)] in a child process; CompileJob.results() collects."""
    request, origins, describers = [], {}, {}
    for puzzle, kernel, describe_line in items:
        module, origins[puzzle.id] = kernel_module(kernel)
        describers[puzzle.id] = describe_line or (lambda filename, line: f"line {line}")
        signature, constexprs = compile_signature(puzzle)
        request.append({"puzzle": puzzle.id, "kernel": puzzle.kernel, "module": module, "signature": signature,
                        "constexprs": constexprs, "targets": list(settings.compile_targets)})
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent.parent)] +
                                        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    process = subprocess.Popen([sys.executable, "-m", "grader.compile_check"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    process.stdin.write(json.dumps(request))
    process.stdin.close()
    process.stdin = None
    return CompileJob(process, origins, describers, settings.compile_timeout_s)


def _compile_all(request):
    import warnings
    warnings.simplefilter("ignore")  # Triton's notices on stderr are not the student's business
    with tempfile.TemporaryDirectory(prefix="triton-course-compile-") as workdir:
        for index, item in enumerate(request):
            path = Path(workdir) / f"kernel_{index}_{item['puzzle']}.py"
            path.write_text(item["module"])
            failures = _compile_one(path, item)
            for (message, function, line), targets in failures.items():
                print(json.dumps({"puzzle": item["puzzle"], "targets": targets, "error": message,
                                  "function": function, "line": line}), flush=True)
            if not failures:
                print(json.dumps({"puzzle": item["puzzle"]}), flush=True)


def _compile_one(path, item):
    """{(message, function, line): [targets]} of the targets the kernel does not compile for."""
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    failures = {}
    for target in item["targets"]:
        # A fresh module for each target: after one failed compile, Triton lets the same kernel object
        # compile "successfully" (seen with a torch call inside a kernel on 3.9).
        name = f"{path.stem}_sm{target}"
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            kernel = getattr(module, item["kernel"])
        except Exception as error:
            failures.setdefault((f"{type(error).__name__}: {error}", None, None), []).append(target)
            continue
        source = ASTSource(fn=kernel, signature=item["signature"], constexprs=item["constexprs"])
        try:
            triton.compile(source, target=GPUTarget("cuda", target, 32))
        except Exception as error:
            failures.setdefault(_describe(error, module), []).append(target)
    return failures


def _describe(error, module):
    """(message, function name, line within the function) of a compile error."""
    text = str(error)
    message = getattr(error, "error_message", None) or text.strip().splitlines()[-1]
    location = re.match(r"at (\d+):(\d+):", text)
    function = line = None
    if location and getattr(error, "src", None):
        line = int(location.group(1))
        function = next((name for name, value in vars(module).items()
                         if python_function(value) is not None and _source(value) == error.src), None)
    if function is None:
        function, line = _host_call(module, text)
    return message, function, line


def _source(kernel):
    """The kernel's source from its `def` line on, as Triton keeps it."""
    try:
        text = textwrap.dedent(inspect.getsource(python_function(kernel)))
    except (OSError, TypeError):
        return None
    return "\n".join(text.splitlines()[ast.parse(text).body[0].lineno - 1:]) + "\n"


def _host_call(module, text):
    """For 'Unsupported function referenced': the first kernel line calling into torch, numpy or math."""
    if "Unsupported function referenced" not in text:
        return None, None
    hosts = {name for name, value in vars(module).items()
             if inspect.ismodule(value) and value.__name__.split(".")[0] in ("torch", "numpy", "math")}
    for name, value in vars(module).items():
        fn = python_function(value)
        if fn is None:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        def_line = tree.body[0].lineno
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in hosts:
                return name, node.lineno - def_line + 1
    return None, None


if __name__ == "__main__":
    _compile_all(json.loads(sys.stdin.read()))
