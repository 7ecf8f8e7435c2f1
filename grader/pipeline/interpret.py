"""Launch a kernel in Triton's interpreter on CPU tensors, whatever TRITON_INTERPRET said at import.

Triton decides interpretation when `@triton.jit` runs, and its own helpers (tl.sum, tl.cdiv, ...) are
decorated at `import triton`. Instead of relying on that, `interpreting()` makes every @jit function
callable from an interpreted kernel for the duration of a launch, patches triton.language once (the
stock interpreter re-patches it on every helper call and never restores it, which breaks real
compilation later in the same process), turns off the integer-overflow check whose result the
interpreter ignores anyway, and restores all of it on exit. `launch` then runs the programs of the grid
in the order the case asks for, which the stock interpreter fixes to 0, 1, 2, ...
"""
import contextlib
import dataclasses
import io
import sys
import traceback
import warnings
from contextlib import contextmanager

import triton.language as tl
from triton.language import core  # patched together with tl: helpers such as tl.zeros call core.* builtins
from triton.runtime import interpreter
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction, _normalize_ty

from .memcheck import OutOfBounds
from ..settings import DEFAULT

_rewritten = {}  # python function -> its interpreter rewrite (cached, as Triton does)


def python_function(kernel):
    """The plain Python function under @triton.jit, @triton.autotune and @triton.heuristics."""
    while isinstance(kernel, (Autotuner, Heuristics)):
        kernel = kernel.fn
    if isinstance(kernel, (JITFunction, interpreter.InterpretedFunction)):
        return kernel.fn
    return None


def _interpretable(fn):
    if fn not in _rewritten:
        _rewritten[fn] = interpreter.InterpretedFunction(fn).rewrite()
    return _rewritten[fn]


def _call_helper(self, *args, **kwargs):
    # A @jit helper called from an interpreted kernel: run its rewritten source directly.
    return _interpretable(self.fn)(*args, **kwargs)


def _language_anchor():
    """Never called: its globals show triton.language and its core to the interpreter's patcher."""
    return tl, core


@contextmanager
def interpreting():
    """Interpret kernels for the duration of the block, then restore Triton exactly as it was."""
    builder = interpreter.interpreter_builder
    saved_calls = (JITFunction.__call__, interpreter.InterpretedFunction.__call__)
    saved_options = builder.options
    scope = interpreter._patch_lang(_language_anchor)
    # A scalar in the interpreter is a one-element array; Triton 3.6 converts it with int(), which NumPy 2.5
    # refuses for arrays of one dimension (a `range(0, N, BLOCK)` loop then fails).
    scope.set_attr(tl.core.tensor, "__index__", lambda self: int(self.handle.data.item()))
    JITFunction.__call__ = _call_helper
    interpreter.InterpretedFunction.__call__ = _call_helper
    builder.options = dataclasses.replace(saved_options, sanitize_overflow=False)
    try:
        with warnings.catch_warnings():
            # Triton's own deprecation notices while interpreting are noise to a student (and cost a test cell
            # its points under nbgrader).
            warnings.simplefilter("ignore")
            yield
    finally:
        builder.options = saved_options
        JITFunction.__call__, interpreter.InterpretedFunction.__call__ = saved_calls
        scope.restore()


def constexpr_params(fn):
    annotations = getattr(fn, "__annotations__", {})
    return {name for name, annotation in annotations.items() if _normalize_ty(annotation) == "constexpr"}


class KernelCrashed(Exception):
    """The kernel raised while interpreted; carries the student's line where it happened."""

    def __init__(self, error, program, filename, line, source_line):
        self.error, self.program = error, program
        self.filename, self.line, self.source_line = filename, line, source_line
        super().__init__(f"{type(error).__name__}: {error}")


@dataclasses.dataclass
class LaunchOutput:
    printed: str  # what the kernel printed (tl.device_print, print), capped


def launch(fn, args, grid, programs, memory):
    """Run `fn` on `args` (kernel parameter order) for every program in `programs`, memory-checked.

    Must run inside `interpreting()`. Raises memcheck.OutOfBounds before any out-of-bounds access and
    KernelCrashed when the kernel itself raises.
    """
    kernel = _interpretable(fn)
    params = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    constexprs = constexpr_params(fn)
    call_args = {}
    for param, value in zip(params, args):
        if param in constexprs:
            call_args[param] = value
        else:
            converted = interpreter._implicit_cvt(value)
            if hasattr(value, "data_ptr"):
                memory.tag(param, converted.handle)
            call_args[param] = converted
    builder = interpreter.interpreter_builder
    builder.set_grid_dim(*grid)
    printed = io.StringIO()
    with memory.installed(), contextlib.redirect_stdout(printed):
        for program in programs:
            builder.set_grid_idx(*program)
            try:
                kernel(**call_args)
            except OutOfBounds:
                raise
            except Exception as error:
                raise _crash(error, program, fn) from error
    return LaunchOutput(printed.getvalue()[:DEFAULT.kernel_output_chars])


def _crash(error, program, fn):
    filename = fn.__code__.co_filename
    frames = [f for f in traceback.extract_tb(sys.exc_info()[2]) if f.filename == filename]
    line, source_line = (frames[-1].lineno, frames[-1].line or "") if frames else (None, "")
    return KernelCrashed(error, program, filename, line, source_line)
