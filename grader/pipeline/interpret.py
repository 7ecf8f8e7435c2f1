"""Launch a kernel in Triton's interpreter on CPU tensors, whatever TRITON_INTERPRET said at import.

Triton decides interpretation when `@triton.jit` runs, and its own helpers (tl.sum, tl.cdiv, ...) are
decorated at `import triton`. Instead of relying on that, `interpreting()` makes every @jit function
callable from an interpreted kernel for the duration of a launch, patches triton.language once (the
stock interpreter re-patches it on every helper call and never restores it, which breaks real
compilation later in the same process), turns off the integer-overflow check whose result the
interpreter ignores anyway, and restores all of it on exit. `launch` then runs the programs of the grid
in the order the case asks for, which the stock interpreter fixes to 0, 1, 2, ...
"""
import bdb
import collections.abc
import contextlib
import dataclasses
import inspect
import io
import math
import operator
import re
import sys
import traceback
import warnings
from contextlib import contextmanager

import numpy as np
from triton import knobs

import triton.language as tl
from triton.language import core  # patched together with tl: helpers such as tl.zeros call core.* builtins
from triton.runtime import interpreter
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction, _normalize_ty

from .memcheck import OutOfBounds
from .readable import device_print, tensor_repr
from ..settings import DEFAULT

# The puzzles' precision contract: a float32 tl.dot is IEEE float32 unless the kernel asks for
# input_precision="tf32" (Triton's GPU default is TF32; its interpreter computes exactly). Both stages set it.
FLOAT32_DOT = "ieee"

_rewritten = {}  # python function -> its interpreter rewrite (cached, as Triton does)


def python_function(kernel):
    """The plain Python function under @triton.jit, @triton.autotune and @triton.heuristics."""
    while isinstance(kernel, (Autotuner, Heuristics)):
        kernel = kernel.fn
    if isinstance(kernel, (JITFunction, interpreter.InterpretedFunction)):
        return kernel.fn
    return None


def asserts_checked(kernel):
    """Whether tl.device_assert checks its condition, as a GPU launch of `kernel` decides: @triton.jit(debug=True)
    or TRITON_DEBUG=1 (otherwise the compiler leaves the asserts out). Triton's interpreter never checks them."""
    while isinstance(kernel, (Autotuner, Heuristics)):
        kernel = kernel.fn
    declared = kernel.debug if isinstance(kernel, JITFunction) else getattr(kernel, "kwargs", {}).get("debug")
    return bool(declared) or bool(knobs.runtime.debug)


def _interpretable(fn):
    if fn not in _rewritten:
        _rewritten[fn] = interpreter.InterpretedFunction(fn).rewrite()
    return _rewritten[fn]


def _call_helper(self, *args, **kwargs):
    # A @jit helper called from an interpreted kernel: run its rewritten source directly.
    if self.fn is _SORT_IMPL:
        return _sorted(*args, **kwargs)
    return _interpretable(self.fn)(*args, **kwargs)


def _language_anchor():
    """Never called: its globals show triton.language and its core to the interpreter's patcher."""
    return tl, core


@contextmanager
def interpreting(namespaces=()):
    """Interpret kernels for the duration of the block, then restore Triton exactly as it was. `namespaces`: the
    kernels' globals, whose own names for triton.language functions (`from triton.language import load`) are
    pointed at the interpreter's versions too, and restored."""
    builder = interpreter.interpreter_builder
    saved_calls = (JITFunction.__call__, interpreter.InterpretedFunction.__call__)
    saved_options = builder.options
    originals = _language_functions()
    scope = interpreter._patch_lang(_language_anchor)
    # A scalar in the interpreter is a one-element array; Triton 3.6 converts it with int(), which NumPy 2.5
    # refuses for arrays of one dimension (a `range(0, N, BLOCK)` loop then fails).
    scope.set_attr(tl.core.tensor, "__index__", lambda self: int(self.handle.data.item()))
    JITFunction.__call__ = _call_helper
    interpreter.InterpretedFunction.__call__ = _call_helper
    builder.options = dataclasses.replace(saved_options, sanitize_overflow=False)
    saved_precision = knobs.language.fp32_default
    knobs.language.fp32_default = FLOAT32_DOT
    patched = _gpu_semantics(builder, scope)
    for name in ("__repr__", "__str__"):
        scope.set_attr(tl.core.tensor, name, tensor_repr)
    builder.create_print = device_print(builder)
    patched.append("create_print")
    _faster(scope)
    # tl.tensor's reduction methods (x.sum(axis=0), x.max()) are @jit functions stored on the class: called through
    # an instance they must receive it, as the compiler passes it.
    JITFunction.__get__ = _bind_to_tensor
    new_range = tl.range
    scope.set_attr(tl, "range", lambda *args, **kwargs: LoopRange(new_range(*args, **kwargs)))
    renamed, ranged = [], []
    for namespace in namespaces:
        for name, value in list(namespace.items()):
            if id(value) in originals:
                language, attribute = originals[id(value)]
                if getattr(language, attribute) is not value:
                    renamed.append((namespace, name, value))
                    namespace[name] = getattr(language, attribute)
        if "range" not in namespace:  # a kernel's own `range` loops, as tl.range's
            namespace["range"] = LoopRange
            ranged.append(namespace)
    try:
        with warnings.catch_warnings():
            # Triton's own deprecation notices while interpreting are noise to a student (and cost a test cell
            # its points under nbgrader).
            warnings.simplefilter("ignore")
            yield
    finally:
        for name in patched:
            delattr(builder, name)
        del JITFunction.__get__
        for namespace, name, value in renamed:
            namespace[name] = value
        for namespace in ranged:
            namespace.pop("range", None)
        knobs.language.fp32_default = saved_precision
        builder.options = saved_options
        JITFunction.__call__, interpreter.InterpretedFunction.__call__ = saved_calls
        scope.restore()


class LoopIndex(int):
    """The variable of a kernel's `range` or `tl.range` loop. Compiled, it is an integer tensor (scf.for's induction
    variable), whose methods a kernel may call (`row.to(tl.int64)`, `(block * BLOCK).to(tl.int64)`, as a grid-stride
    loop widens its offsets); the interpreter's range gives plain ints, which have none. An int still (a bound, an
    index), with a tensor's conversion, and integer arithmetic on it keeps it. tl.static_range's variable stays a
    plain int: compiled, it is a constant."""
    __slots__ = ()

    def to(self, dtype, *args, **kwargs):
        return tl.full([], int(self), self.dtype).to(dtype, *args, **kwargs)

    @property
    def dtype(self):
        return tl.int32 if -2 ** 31 <= self < 2 ** 31 else tl.int64


def _keeping_the_index(name):
    operation = getattr(int, name)

    def keeping(self, *other):
        other = [value.value if isinstance(value, tl.constexpr) else value for value in other]
        if any(type(value) is bool or not isinstance(value, int) for value in other):
            return operation(self, *other)  # a tensor's own reflected operation, or a float's
        return LoopIndex(operation(self, *other))
    return keeping


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__", "__rfloordiv__",
              "__mod__", "__rmod__", "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__and__", "__rand__",
              "__or__", "__ror__", "__xor__", "__rxor__", "__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(LoopIndex, _name, _keeping_the_index(_name))


class LoopRange(collections.abc.Sequence):
    """Python's range, whose elements are LoopIndex: a kernel's module's `range` while it is interpreted. Host code
    of the module that runs meanwhile (a pruner, a heuristic) gets a sequence that behaves as range does (len,
    reversed, indexing, slicing, iterating again)."""
    __slots__ = ("_range",)

    def __init__(self, *args):
        self._range = args[0] if len(args) == 1 and isinstance(args[0], range) else range(*args)

    def __len__(self):
        return len(self._range)

    def __getitem__(self, index):
        value = self._range[index]
        return LoopRange(value) if isinstance(value, range) else LoopIndex(value)

    def __iter__(self):
        return map(LoopIndex, self._range)

    def __reversed__(self):
        return map(LoopIndex, reversed(self._range))

    def __contains__(self, value):
        return value in self._range

    def __eq__(self, other):
        return self._range == (other._range if isinstance(other, LoopRange) else other)

    def __hash__(self):
        return hash(self._range)

    def __repr__(self):
        return repr(self._range)

    def __getattr__(self, name):  # start, stop, step, index, count
        return getattr(self._range, name)


def _bind_to_tensor(self, instance, owner=None):
    return self if instance is None else lambda *args, **kwargs: _call_helper(self, instance, *args, **kwargs)


def _language_functions():
    """{id(function): (module, name)} of triton.language's functions, as they are before the interpreter's patches."""
    modules = [tl, tl.core, tl.math]
    try:
        from triton.language.extra import libdevice
        modules.append(libdevice)
    except ImportError:
        pass
    return {id(value): (module, name) for module in modules for name, value in vars(module).items()
            if callable(value) and not name.startswith("_") and not isinstance(value, type)}


# --- Where Triton's interpreter differs from the GPU, the grader gives the GPU's meaning -------------------------

def _gpu_semantics(builder, scope):
    """Patch the interpreter where it departs from what the GPU compiler does with the same kernel; returns the
    names set on the builder instance (removed afterwards).

    - A comparison's result is a boolean (int1) on the GPU. The interpreter types it like its operands, so a
      scalar comparison broadcast into a block becomes int32, and `block_mask & (row < M)` is then an int32
      mask, which NumPy treats as indices rather than lanes.
    - libdevice (triton.language.extra.libdevice: rsqrt, erf, tanh, ...) is resolved by the compiler; the
      interpreter has no implementation at all. The grader computes each function with NumPy.
    - tl.dot(..., input_precision="tf32") multiplies float32 operands rounded to TF32 on the GPU; the
      interpreter ignores the precision. The grader rounds them as the tensor cores do.
    - A constexpr parameter reaches an interpreted kernel as a plain int, and tl.constexpr lacks the reflected
      operators `%`, `<<`, `>>`, `&`, `^`: `BLOCK_N >> LOG2_SUB` with a module constant fails there, not on the GPU.
    - tl.fma (and libdevice's fma) rounds once on the GPU; Triton 3.6's interpreter multiplies and then adds,
      rounding twice (`fma(a, a, -(a * a))`, the product's rounding error, is 0 there).
    - A float converted to an integer saturates on the GPU (cvt.rzi: past the type's range its limit, NaN 0);
      NumPy wraps (1e20 becomes INT_MIN). An integer divided by 0 is -1 (every bit set) on the GPU stage's H200;
      NumPy gives 0. A kernel could tell the grader from a GPU by either.
    - The compiler trusts what tl.assume, tl.multiple_of and tl.max_constancy promise of the values (it drops a
      bound check, vectorises a mask or an access); the interpreter ignores them. The grader checks each promise
      against the values each program gives it (_hints_checked).
    """
    for name, operation in REFLECTED.items():
        if not hasattr(tl.constexpr, name):
            scope.set_attr(tl.constexpr, name, lambda self, other, _op=operation: tl.constexpr(_op(other, self.value)))
    patched = ["create_dot", "create_fma", "create_assume"]
    setattr(builder, "create_dot", _tf32_aware(builder.create_dot))
    setattr(builder, "create_fma", lambda x, y, z: interpreter.TensorHandle(
        fused_multiply_add(x.data, y.data, z.data), z.dtype.scalar))
    setattr(builder, "create_assume", _assumption_checked)
    for name in ("create_fp_to_si", "create_fp_to_ui"):
        setattr(builder, name, _saturating(getattr(builder, name)))
    for name in ("create_sdiv", "create_udiv"):
        setattr(builder, name, _by_zero_all_bits(getattr(builder, name)))
    patched += ["create_fp_to_si", "create_fp_to_ui", "create_sdiv", "create_udiv"]
    _hints_checked(scope)
    for name in dir(builder):
        if name.startswith(("create_icmp", "create_fcmp")) and name not in vars(builder):
            setattr(builder, name, _boolean_result(getattr(builder, name)))
            patched.append(name)
    setattr(builder, "create_extern_elementwise", _extern_elementwise)
    patched.append("create_extern_elementwise")
    try:
        from triton.language.extra import libdevice as dispatch
        from triton.language.extra.cuda import libdevice as cuda
    except ImportError:
        return patched
    interpreter._patch_builtin(cuda, builder, scope)
    for name in dir(dispatch):
        if not name.startswith("_") and callable(getattr(cuda, name, None)):
            scope.set_attr(dispatch, name, getattr(cuda, name))
    return patched


def _saturating(convert):
    def conversion(src, dst_type):
        # bfloat16 is held as its bits, which the interpreter's own conversion reads; 8- and 16-bit integers the
        # GPU converts through a wider one and truncates, as NumPy's conversion wraps.
        if src.dtype.scalar == tl.bfloat16 or dst_type.scalar.primitive_bitwidth < 32:
            return convert(src, dst_type)
        return _saturated(src, dst_type)
    return conversion


def _saturated(src, dst_type):
    """cvt.rzi's conversion: toward zero, NaN 0, past the type's range its limit. The limits are compared as the
    powers of two they are next to (2**63 - 1 is no float64; 2**63 would wrap)."""
    integer = interpreter._get_np_dtype(dst_type)
    limits = np.iinfo(integer)
    above = 2.0 ** (limits.bits - (limits.min < 0))  # the first value past the largest
    with np.errstate(invalid="ignore"):
        values = np.trunc(np.asarray(src.data, dtype=np.float64))
        inside = np.clip(np.nan_to_num(values, nan=0.0), float(limits.min), np.nextafter(above, 0.0))
        data = np.where(values >= above, limits.max, np.where(values < float(limits.min), limits.min,
                                                              inside.astype(integer)))
    return interpreter.TensorHandle(data.astype(integer), dst_type.scalar)


def _by_zero_all_bits(divide):
    def division(lhs, rhs):
        divisor = np.asarray(rhs.data)
        zero = divisor == 0
        if not zero.any():
            return divide(lhs, rhs)
        quotient = divide(lhs, interpreter.TensorHandle(np.where(zero, 1, divisor).astype(divisor.dtype), rhs.dtype))
        data = np.asarray(quotient.data)
        return interpreter.TensorHandle(np.where(zero, np.array(-1).astype(data.dtype), data), quotient.dtype)
    return division


class BrokenPromise(Exception):
    """What a kernel told the compiler of its values (tl.assume, tl.multiple_of, tl.max_constancy) is false."""


TRUSTED = "the GPU compiler trusts it, and the kernel it compiles may then read or write the wrong elements"


def _assumption_checked(condition):
    data = np.asarray(condition.data)
    if not data.all():
        lane = np.unravel_index(np.argmin(data), data.shape) if data.size > 1 else ()
        where = f" at lane {', '.join(str(int(i)) for i in lane)}" if lane else ""  # not for a scalar
        raise BrokenPromise(f"tl.assume's condition is false{where}: {TRUSTED}")


def _hints_checked(scope):
    """tl.multiple_of and tl.max_constancy (as the interpreter set them) check the values they are given. Not
    tl.max_contiguous: Triton's matmul tutorial promises contiguous row indices that wrap at M, harmless where A
    is row-major. Not pointers: the alignment of the CPU's buffers is not the GPU's."""
    for module in (tl, core):
        for name, broken in (("multiple_of", _not_multiples), ("max_constancy", _not_constant)):
            hint = getattr(module, name)
            scope.set_attr(module, name, _hint_checked(hint, name, broken))


def _hint_checked(hint, name, broken):
    def checked(input, values, *args, **kwargs):
        hinted = hint(input, values, *args, **kwargs)
        if isinstance(input, tl.tensor) and not input.dtype.is_ptr():
            values = [v.value if isinstance(v, tl.constexpr) else v for v in
                      (values if isinstance(values, (list, tuple)) else [values])]
            why = broken(np.asarray(input.handle.data), values)
            if why:
                raise BrokenPromise(f"tl.{name}(..., {values[0] if len(values) == 1 else values}): {why}: {TRUSTED}")
        return hinted
    return checked


def _not_multiples(data, values):
    """Where a run of consecutive values starts (the first lane, and any lane not one more than the one before it
    along the axis), its value must be a multiple of the hint's; what is wrong, else None."""
    data = data.astype(np.int64)
    if data.size == 1:  # a scalar (the interpreter's are blocks of one)
        value = int(data.reshape(-1)[0])
        return None if value % values[0] == 0 else f"the value is {value}, not a multiple of {values[0]}"
    for axis, multiple in enumerate(values):
        along = np.moveaxis(data, axis, -1)
        starts = np.ones(along.shape, dtype=bool)
        starts[..., 1:] = along[..., 1:] != along[..., :-1] + 1
        wrong = starts & (along % multiple != 0)
        if multiple > 1 and wrong.any():
            lane = np.unravel_index(np.argmax(wrong), wrong.shape)
            return (f"lane {lane[-1]} along axis {axis} starts a run of consecutive values with {int(along[lane])}, "
                    f"not a multiple of {multiple}")
    return None


def _not_constant(data, values):
    """Each aligned group of the hint's length along its axis must hold one value; what is wrong, else None."""
    for axis, length in enumerate(values if data.ndim else []):
        along = np.moveaxis(data, axis, -1)
        length = min(length, along.shape[-1])
        if length <= 1:
            continue
        groups = along[..., :along.shape[-1] // length * length].reshape(*along.shape[:-1], -1, length)
        differ = (groups != groups[..., :1]).any(axis=-1)
        if differ.any():
            group = np.unravel_index(np.argmax(differ), differ.shape)[-1]
            return (f"lanes {group * length} to {group * length + length - 1} along axis {axis} do not all hold one "
                    "value")
    return None


REFLECTED = {"__rmod__": operator.mod, "__rlshift__": operator.lshift, "__rrshift__": operator.rshift,
             "__rand__": operator.and_, "__rxor__": operator.xor, "__ror__": operator.or_}


def _tf32_aware(create_dot):
    from triton._C.libtriton import ir

    def dot(a, b, d, input_precision, max_num_imprecise_acc):
        if input_precision == ir.INPUT_PRECISION.TF32 and np.asarray(a.data).dtype == np.float32:
            a = interpreter.TensorHandle(_round_to_tf32(a.data), a.dtype)
            b = interpreter.TensorHandle(_round_to_tf32(b.data), b.dtype)
        return create_dot(a, b, d, input_precision, max_num_imprecise_acc)
    return dot


def _round_to_tf32(values):
    """float32 values rounded to TF32's 10-bit mantissa, to nearest, ties to even."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32)


def _boolean_result(create):
    def compare(lhs, rhs):
        handle = create(lhs, rhs)
        return interpreter.TensorHandle(np.asarray(handle.data).astype(np.bool_, copy=False), tl.int1)
    return compare


def fused_multiply_add(a, b, c):
    """a * b + c rounded once, to c's type. A product of float32 (or narrower) values is exact in float64; their
    sum, rounded to odd in float64, then rounds to the narrower type as the exact sum would (53 >= 2 * 24 + 2
    bits). float64: Triton's own single-rounding fma where it has one."""
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    if c.dtype == np.float64:
        own = getattr(getattr(interpreter, "_interpreter", None), "fma_fp64", None)
        return own(a, b, c) if own is not None else a * b + c
    with np.errstate(all="ignore"):
        product = a.astype(np.float64) * b.astype(np.float64)
        addend = c.astype(np.float64)
        total = product + addend
        # The sum's rounding error, exactly (Knuth's TwoSum); where it is not 0 and the sum's last bit is even,
        # the neighbour on the error's side is the sum rounded to odd.
        back = total - product
        error = (product - (total - back)) + (addend - back)
        even = (total.view(np.uint64) & 1) == 0
        odd = np.where((error != 0) & even & np.isfinite(total), np.nextafter(total, np.where(error > 0, np.inf,
                                                                                               -np.inf)), total)
    return odd.astype(c.dtype)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


_erf, _erfc, _gamma, _lgamma = (np.vectorize(f, otypes=[np.float64]) for f in (math.erf, math.erfc, math.gamma,
                                                                                 math.lgamma))
# libdevice functions by name (its symbols without the __nv_ prefix, the f of float versions, the rounding mode).
LIBDEVICE = {
    "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt, "rcp": lambda x: 1 / x, "cbrt": np.cbrt,
    "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10, x), "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "sinpi": lambda x: np.sin(np.pi * x), "cospi": lambda x: np.cos(np.pi * x), "erf": _erf, "erfc": _erfc,
    "tgamma": _gamma, "lgamma": _lgamma, "normcdf": lambda x: 0.5 * _erfc(-x / np.sqrt(2)),
    "pow": np.power, "powi": np.power, "hypot": np.hypot, "fmod": np.fmod, "copysign": np.copysign,
    "remainder": np.vectorize(math.remainder, otypes=[np.float64]), "fma": fused_multiply_add,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "fdim": lambda a, b: np.maximum(a - b, 0),
    "max": np.fmax, "fmax": np.fmax, "min": np.fmin, "fmin": np.fmin, "abs": np.abs, "fabs": np.abs, "llabs": np.abs,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": _round_half_away, "rint": np.rint,
    "nearbyint": np.rint, "isnan": np.isnan, "isinf": np.isinf, "finite": np.isfinite, "isfinite": np.isfinite,
    "signbit": np.signbit, "saturate": lambda x: np.clip(x, 0, 1), "ldexp": np.ldexp, "nextafter": np.nextafter,
    "rcbrt": lambda x: 1 / np.cbrt(np.asarray(x, np.float64)),
    "rhypot": lambda x, y: 1 / np.hypot(np.asarray(x, np.float64), y), "fdivide": np.divide,
    "erfcx": lambda x: _scaled_erfc(x),
    "logb": lambda x: _exponent(x, np.float64(-np.inf), np.float64(np.inf), np.float64(np.nan)),
    "ilogb": lambda x: _exponent(x, INT32_MIN, INT32_MAX, INT32_MIN),
    # The average of two 32-bit integers without overflow, rounded down (hadd) or up (rhadd), as CUDA's __hadd.
    "hadd": lambda a, b: (a.astype(np.int64) + b) >> 1, "rhadd": lambda a, b: (a.astype(np.int64) + b + 1) >> 1,
    "uhadd": lambda a, b: (a.astype(np.int64) + b) >> 1, "urhadd": lambda a, b: (a.astype(np.int64) + b + 1) >> 1,
}
INT32_MIN, INT32_MAX = np.int64(-2 ** 31), np.int64(2 ** 31 - 1)
# CUDA's intrinsics of float (f) and double (d) arithmetic, named for their type before a rounding mode (__nv_fadd_rn)
LIBDEVICE_INTRINSICS = {prefix + operation: operation for prefix in "fd"
                        for operation in ("add", "sub", "mul", "div", "rcp", "sqrt", "rsqrt")} | {"fmaf": "fma"}


def _scaled_erfc(x):
    """exp(x^2) * erfc(x), libdevice's erfcx: past x = 25, where exp(x^2) overflows, its asymptotic series."""
    x = np.asarray(x, np.float64)
    large = x > 25
    near = np.where(large, 0.0, x)
    far = np.where(large, x, 1.0)
    series = (1 - 1 / (2 * far ** 2) + 3 / (4 * far ** 4) - 15 / (8 * far ** 6)) / (far * np.sqrt(np.pi))
    return np.where(large, series, np.exp(np.square(near)) * _erfc(near))


def _exponent(x, of_zero, of_infinity, of_nan):
    """The exponent of x's binary form, floor(log2(|x|)) (libdevice's logb and ilogb), and their special values."""
    x = np.asarray(x)
    exponent = (np.frexp(np.where(np.isfinite(x) & (x != 0), x, 1))[1] - 1).astype(np.asarray(of_zero).dtype)
    return np.where(np.isnan(x), of_nan, np.where(np.isinf(x), of_infinity, np.where(x == 0, of_zero, exponent)))


def _libdevice_function(symbol):
    """The CPU implementation of a libdevice symbol, or None: looked up by its exact name without the __nv_ prefix,
    its rounding mode (computed to nearest), fast_, and the letter of its type (expf, isinfd, fadd_rn), never by a
    name it merely contains (hadd is not add, rcbrt not cbrt)."""
    name = re.sub(r"_r[nzdu]$", "", symbol.removeprefix("__nv_")).removeprefix("fast_")
    name = LIBDEVICE_INTRINSICS.get(name, name)
    if name not in LIBDEVICE and name[-1:] in ("f", "d") and name[:-1] in LIBDEVICE:
        name = name[:-1]
    return LIBDEVICE.get(name)


def _extern_elementwise(lib_name, lib_path, symbol, args, ret_type, is_pure):
    function = _libdevice_function(symbol)
    if function is None:
        raise NotImplementedError(f"libdevice's {symbol.removeprefix('__nv_')} has no CPU implementation in the "
                                  "grader: use the triton.language function of the same name, or write it out")
    with np.errstate(all="ignore"):
        data = function(*[np.asarray(a.data) for a in args])
    dtype = interpreter._get_np_dtype(ret_type)
    return interpreter.TensorHandle(np.asarray(data).astype(dtype, copy=False), ret_type.scalar)


# --- Where Triton's interpreter is slow for no reason of the GPU's, the grader does the same work faster ---------

def _faster(scope):
    """Patch what costs the interpreter most without changing what a kernel computes (restored with `scope`).

    - tl.reduce and tl.associative_scan with a combine function of the kernel's own: the interpreter calls the
      combine function once per element, in Python (seconds for one block). The grader combines whole blocks,
      a few calls: for a reduction, runs of 4 elements in order and then neighbours in a tree (as a GPU's
      threads fold what each holds, then combine across threads); for a scan, each element with the one 1, 2,
      4, ... before it (the combine function must be associative for the GPU compiler too). A combine function
      that cannot take blocks (an `if` on its arguments) gets the interpreter's own element-by-element loop.
    - The NumPy type of a Triton type is looked up in a table the interpreter builds anew at every call.
    tl.sort and tl.topk, interpreted, are Triton's bitonic network: _call_helper sorts with NumPy instead.
    """
    scope.set_attr(interpreter.ReduceOps, "generic_reduce", _blockwise(interpreter.ReduceOps.generic_reduce,
                                                                        _reduce_pairwise))
    scope.set_attr(interpreter.ScanOps, "generic_scan", _blockwise(interpreter.ScanOps.generic_scan, _scan_doubling))
    scope.set_attr(interpreter, "_get_np_dtype", _remembered(interpreter._get_np_dtype))


def _blockwise(one_at_a_time, blocks_at_a_time):
    def generic(self, input):
        if self.axis is not None and self.axis < 0:  # the interpreter's own loop goes wrong on a negative axis
            self.axis += len(input[0].handle.data.shape)
        try:
            with np.errstate(all="ignore"):
                result = blocks_at_a_time(self, input)
        except (OutOfBounds, bdb.BdbQuit):
            raise
        except Exception:  # a combine function written for scalars only: the interpreter's loop says what fails
            result = None
        return one_at_a_time(self, input) if result is None else result
    return generic


def _scan_doubling(self, input):
    """ScanOps.generic_scan's result in log2(n) steps (Hillis and Steele): at each step every element is
    combined with the one `offset` before it; None where that cannot be done."""
    axis, dtypes = self.axis, [arg.dtype for arg in input]
    values = [arg.handle.data for arg in input]
    size = values[0].shape[axis]
    if any(v.shape != values[0].shape for v in values) or size & (size - 1):
        return None
    position = np.arange(size).reshape([size if dim == axis else 1 for dim in range(values[0].ndim)])
    offset = 1
    while offset < size:  # the first `offset` elements are combined with wrapped-around ones and keep their value
        combined = _combine_blocks(self, [np.roll(v, offset, axis) for v in values], values, dtypes)
        if combined is None:
            return None
        values = [np.where(position >= offset, new, old) for new, old in zip(combined, values)]
        offset *= 2
    return [self.to_tensor(data, dtype) for data, dtype in zip(values, dtypes)]


THREAD_RUN = 4  # elements of a reduction one GPU thread combines in order before the tree across threads


def _reduce_pairwise(self, input):
    """ReduceOps.generic_reduce's result: runs of THREAD_RUN elements folded in order, then neighbours combined in a
    tree; None where that cannot be done."""
    # Every input flattened for a reduction over all axes (the interpreter flattens only the first of a tuple's,
    # and then fails where the GPU does not).
    axis = 0 if self.axis is None else self.axis
    dtypes = [arg.dtype for arg in input]
    values = [np.reshape(arg.handle.data, -1) if self.axis is None else arg.handle.data for arg in input]
    shape = values[0].shape
    if any(v.shape != shape for v in values) or shape[axis] & (shape[axis] - 1):
        return None
    # As a GPU thread folds the few elements it holds in order, then the threads combine in a tree: a combine
    # function that is not associative (`(a + b) * 0.5` for a mean) is as wrong here as there.
    run = min(THREAD_RUN, shape[axis])
    folded = [np.take(v, np.arange(0, shape[axis], run), axis) for v in values]
    for element in range(1, run):
        folded = _combine_blocks(self, folded, [np.take(v, np.arange(element, shape[axis], run), axis)
                                                 for v in values], dtypes)
        if folded is None:
            return None
    values = folded
    while values[0].shape[axis] > 1:
        left = [np.take(v, np.arange(0, v.shape[axis], 2), axis) for v in values]
        right = [np.take(v, np.arange(1, v.shape[axis], 2), axis) for v in values]
        values = _combine_blocks(self, left, right, dtypes)
        if values is None:
            return None
    rank = len(input[0].handle.data.shape)
    reduced = []
    for data, dtype in zip(values, dtypes):
        data = np.squeeze(data, axis)
        if self.keep_dims:  # as the GPU keeps them: a reduction over all axes keeps all of them
            data = np.expand_dims(data, axis) if self.axis is not None else np.reshape(data, (1,) * rank)
        elif self.axis is None:
            data = data.item()
        reduced.append(self.to_tensor(data, dtype))
    return reduced


def _combine_blocks(self, earlier, later, dtypes):
    """The combine function on whole blocks, combine(*earlier, *later): arrays shaped and typed like `earlier`'s,
    or None where it does not give one block (or one value) per input."""
    with _one_element_truths():
        combined = self.combine_fn.fn(*[self.to_tensor(v, d) for v, d in zip(earlier + later, dtypes + dtypes)])
    combined = combined if isinstance(combined, tuple) else (combined,)
    if len(combined) != len(earlier):
        return None
    arrays = []
    for result, like in zip(combined, earlier):
        data = np.asarray(result.handle.data if isinstance(result, tl.core.tensor) else result)
        if data.shape not in (like.shape, (), (1,)):
            return None
        arrays.append(np.broadcast_to(data, like.shape).astype(like.dtype))
    return arrays


@contextmanager
def _one_element_truths():
    """A block has no truth value (`if a > b:` in a combine function): the interpreter calls any block true, which
    would give a combine function of blocks a wrong answer without a word. Here it raises instead."""
    saved = tl.core.tensor.__bool__, tl.core.tensor.__index__

    def only_one(convert):
        def converted(self):
            if np.size(self.handle.data) != 1:
                raise TypeError("a block has no single value")
            return convert(self)
        return converted
    tl.core.tensor.__bool__, tl.core.tensor.__index__ = (only_one(convert) for convert in saved)
    try:
        yield
    finally:
        tl.core.tensor.__bool__, tl.core.tensor.__index__ = saved


# tl.sort and tl.topk are a bitonic network of a few hundred block operations: interpreted, seconds a call.
_SORT_IMPL = getattr(getattr(tl.standard, "sort_impl", None), "fn", None)


def _sorted(x, k=None, dim=None, descending=0):
    """tl.standard.sort_impl's values, sorted by NumPy: the last axis in order, its first k (tl.topk)."""
    k, dim, descending = (tl.core._unwrap_if_constexpr(v) for v in (k, dim, descending))
    last = len(x.shape) - 1
    if dim is not None and dim != last:
        raise ValueError("only minor dimension is currently supported")
    values = np.sort(x.handle.data, axis=-1)
    if descending:
        values = values[..., ::-1]
    if k is not None:
        values = values[..., :k]
    values = np.ascontiguousarray(values)
    return tl.core.tensor(interpreter.TensorHandle(values, x.dtype), tl.block_type(x.dtype, list(values.shape)))


def _remembered(np_dtype):
    known = {}

    def remembered(tt_dtype):
        try:
            return known[tt_dtype]
        except KeyError:
            known[tt_dtype] = found = np_dtype(tt_dtype)
            return found
        except TypeError:  # pointer and block types are not hashable
            return np_dtype(tt_dtype)
    return remembered


# --- launching --------------------------------------------------------------------------------------------------

# What a launch takes besides the kernel's parameters: a heuristic may compute them too (they change the compiled
# code on a GPU, nothing in the interpreter).
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")


def with_constants(kernel, args, constants):
    """A launch's arguments (by position) extended to give the kernel's own parameters `constants` ({name: value},
    a tuning configuration's) by position too, with the defaults of the parameters between: what a compile of the
    launch takes. `args` as they are where `constants` is empty or a heuristic raises (the launch says so)."""
    if not constants:
        return list(args)
    try:
        bound = bind_arguments(kernel, args, constants)
    except KernelCrashed:
        return list(args)
    code = python_function(kernel).__code__
    params = code.co_varnames[:code.co_argcount]
    last = max(params.index(name) for name in constants)
    return list(args) + [bound[name] for name in params[len(args):last + 1]]


def bind_arguments(kernel, args, kwargs=None, options=None):
    """The kernel's arguments by parameter name, as `kernel[grid](*args, **kwargs)` binds them: `args` by
    position, then the constants of an @triton.autotune's first configuration, the parameters @triton.heuristics
    computes (outermost decorator first; a heuristic sees what the decorators outside it gave), then the defaults.
    Launch options a heuristic computes go into `options` when it is given. This is the one place the grader
    binds a launch's arguments."""
    fn = python_function(kernel)
    params = list(inspect.signature(fn).parameters.values())
    names = {param.name for param in params}
    bound = {param.name: value for param, value in zip(params, args)}
    bound.update(kwargs or {})
    layer = kernel
    while isinstance(layer, (Autotuner, Heuristics)):
        if isinstance(layer, Autotuner) and layer.configs:
            # The autotuner passes the constants of the configuration it launches (its first, here) to what it wraps.
            for name, value in layer.configs[0].kwargs.items():
                bound.setdefault(name, value)
        if isinstance(layer, Heuristics):
            unseen = getattr(layer, "unseen", ())  # worker.KernelModules marks what a configuration gives it later
            for name, heuristic in layer.values.items():
                try:
                    value = heuristic(sizes_only({key: value for key, value in bound.items() if key not in unseen}))
                except Exception as error:  # the kernel's own error, at the heuristic's line, like one in the kernel
                    code = getattr(heuristic, "__code__", None)
                    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
                             if code and frame.filename == code.co_filename]
                    raise KernelCrashed(HeuristicFailed(f"the @triton.heuristics function for {name} raised "
                                                        f"{type(error).__name__}: {error}"), (0,),
                                        code and code.co_filename,
                                        lines[-1] if lines else code and code.co_firstlineno) from None
                if name in names:
                    bound[name] = value
                elif name in LAUNCH_OPTIONS and options is not None:
                    options[name] = value
        layer = layer.fn
    for param in params:
        if param.name not in bound and param.default is not inspect.Parameter.empty:
            bound[param.name] = param.default
    return bound


def sizes_only(bound):
    """The arguments as a heuristic sees them: each tensor's shape, strides, storage offset and dtype on the meta
    device, without its values. A heuristic chooses blocks from sizes; one that read the values would compute the
    answer on the host and hand it to the kernel as a constant."""
    import torch

    def without_values(tensor):
        elements = tensor.untyped_storage().nbytes() // max(tensor.element_size(), 1)
        return torch.empty(elements, dtype=tensor.dtype, device="meta").as_strided(
            tensor.shape, tensor.stride(), tensor.storage_offset())
    return {name: without_values(value) if isinstance(value, torch.Tensor) else value for name, value in bound.items()}


def constexpr_params(fn):
    annotations = getattr(fn, "__annotations__", {})
    return {name for name, annotation in annotations.items() if _normalize_ty(annotation) == "constexpr"}


class HeuristicFailed(Exception):
    """A @triton.heuristics function raised while the arguments were bound."""


class KernelCrashed(Exception):
    """The kernel raised while interpreted; carries the student's file and line where it happened."""

    def __init__(self, error, program, filename, line):
        self.error, self.program = error, program
        self.filename, self.line = filename, line
        super().__init__(f"{type(error).__name__}: {error}")


@dataclasses.dataclass
class LaunchOutput:
    printed: str  # what the kernel printed (tl.device_print, print), capped


def launch(kernel, arguments, grid, programs, memory, files=None, capture=True):
    """Run `kernel` (@triton.jit, under @autotune or @heuristics too) on `arguments` ({parameter: value},
    bind_arguments) for every program in `programs`, memory-checked, its tl.device_assert checked where a GPU
    launch would check it (asserts_checked).

    Must run inside `interpreting()`. Raises memcheck.OutOfBounds before any out-of-bounds access and
    KernelCrashed when the kernel itself raises, with the deepest line of `files` (the kernel's own file when
    none are given) where it happened. `capture`: what the kernel prints is returned, not shown (False leaves
    it on the screen as it happens, where a debugger stopped in the kernel talks to the student).
    """
    fn = python_function(kernel)
    interpretable = _interpretable(fn)
    constexprs = constexpr_params(fn)
    call_args = {}
    for param, value in arguments.items():
        if param in constexprs:
            call_args[param] = value
        elif isinstance(value, bool):  # as Triton 3.9 converts it (3.6's interpreter gives an int1 an int32 array)
            converted = tl.tensor(interpreter.TensorHandle(np.array([value], dtype=np.bool_), tl.int1), tl.int1)
            call_args[param] = converted
        else:
            converted = interpreter._implicit_cvt(value)
            if hasattr(value, "data_ptr"):
                memory.tag(param, converted.handle)
            call_args[param] = converted
    builder = interpreter.interpreter_builder
    builder.set_grid_dim(*grid)
    printed = io.StringIO()
    options = builder.options
    builder.options = dataclasses.replace(options, debug=asserts_checked(kernel))
    try:
        with memory.installed(), contextlib.redirect_stdout(printed) if capture else contextlib.nullcontext():
            for program in programs:
                builder.set_grid_idx(*program)
                try:
                    interpretable(**call_args)
                except (OutOfBounds, bdb.BdbQuit):
                    raise
                except Exception as error:
                    raise _crash(error, program, files or {fn.__code__.co_filename}) from error
    finally:
        builder.options = options
    return LaunchOutput(printed.getvalue()[:DEFAULT.kernel_output_chars])


def _crash(error, program, files):
    frames = [f for f in traceback.extract_tb(sys.exc_info()[2]) if f.filename in files]
    filename, line = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
    return KernelCrashed(error, program, filename, line)
