"""What the grader accepts from a submission, checked on its syntax tree before any of it runs anywhere.

A kernel runs in the sandboxed worker as Python (Triton's interpreter executes it), so what a kernel may
contain is what keeps the worker honest. These rules accept the Triton language as its compiler does:
parameters and locals, `triton.language` and `math`, the submission's own `@triton.jit` and
`@triton.constexpr_function` functions and module constants, `range`, `min`, `max`, `print` and the other
builtins Triton's code generator knows; `if`, `for`, `while`, arithmetic, subscripts, `.to()`, `.dtype`,
`.shape` and the rest of the public API of Triton's tensors and types. They refuse what the compiler refuses
(imports, `try`, `raise`, `with`, lambdas, calls into torch or os) and what only the interpreter would run
(private attributes such as `x.handle` or `tl.core._...`, assignments to attributes, `getattr` but called
with the attribute's name written out, a module held as a value rather than read as `module.name`, any module
other than `triton.language` and `math`), in every branch, whatever a case's constants make of it: a branch
that is dead for one block size is live for another.

Host code the grader runs for a submission (module constants, `@triton.constexpr_function` bodies,
`@triton.heuristics` values, tuning configurations) follows the same rules with a few more builtins
(`abs`, `round`, `filter`, ...), itertools' combinators, dictionaries and comprehensions, and runs only in the
sandbox.
"""
import ast
import builtins
import importlib
import importlib.machinery
import inspect
import itertools
import operator
import os
import sys
import types
from dataclasses import dataclass

import triton
import triton.language as tl
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITCallable

# The builtins Triton's code generator resolves inside a kernel (code_generator.builtin_namespace).
KERNEL_BUILTINS = frozenset({"range", "float", "int", "len", "min", "max", "print", "isinstance", "getattr",
                             "hasattr", "list"})
# filter: Triton's attention tutorial keeps the configurations a function of its own accepts.
HOST_BUILTINS = KERNEL_BUILTINS | {"abs", "bool", "round", "pow", "divmod", "tuple", "dict", "set", "sorted",
                                   "sum", "any", "all", "enumerate", "zip", "reversed", "str", "filter", "map",
                                   "iter", "next", "True", "False", "None"}
ATTRIBUTE_READERS = ("getattr", "hasattr")
PYTHON_SCALAR_TYPES = ("int", "float", "bool")  # annotations Triton reads as i32, fp32 and i1
# Host code may read torch's and numpy's dtypes and numeric limits and build lists with itertools' combinators
# (tuning configurations over itertools.product), kernels nothing of them.
HOST_MODULES = ("torch", "numpy", "itertools")
HOST_ITERTOOLS = ("product", "chain", "combinations", "combinations_with_replacement", "permutations", "islice",
                  "zip_longest")
TRITON_TOP_LEVEL = ("jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "constexpr_function",
                    "must_use_result")
STRING_LIMIT = 10_000
BLOCK_POINTERS_GONE = (f"Triton {triton.__version__} has no block pointers: tl.make_block_ptr and tl.advance gave way "
                       "to tl.make_tensor_descriptor(base, shape, strides, block_shape), whose desc.load([offsets]) "
                       "and desc.store([offsets], value) check every block against the shape")


def _public_attributes(*classes):
    return {name for cls in classes if cls is not None for name in dir(cls) if not name.startswith("_")}


_CLASSES = [getattr(tl, name, None) or getattr(tl.core, name, None) for name in (
    "tensor", "constexpr", "dtype", "pointer_type", "block_type", "tuple", "tuple_type", "tensor_descriptor",
    "tensor_descriptor_base", "slice")]
# Attributes of the values a kernel computes with: the public API of Triton's tensors and types, and the
# instance attributes they carry. `handle` (the interpreter's raw array) and `to_ir` (the compiler's builder)
# are internals, not language.
VALUE_ATTRIBUTES = frozenset((_public_attributes(*_CLASSES) | {
    "type", "dtype", "shape", "numel", "value", "values", "element_ty", "primitive_bitwidth", "int_bitwidth",
    "fp_mantissa_width", "exponent_bias", "block_shape", "strides", "base", "load", "store"}) - {"handle", "to_ir"})
# Which GPU host code chooses for, asked as Triton's tutorials ask it (`is_cuda()`:
# triton.runtime.driver.active.get_current_target().backend; the fused softmax's SMs and registers:
# driver.active.utils.get_device_properties(device)["multiprocessor_count"]), or as libraries ask torch
# (torch.cuda.get_device_properties(0).multi_processor_count); the sandbox answers for the GPU compiled for
# (configs.on_the_gpu). Not a tensor's `.device`: the sandbox's tensors are not on a GPU, and a heuristic that read
# it could tell the grader from the GPU stage.
TORCH_CUDA_QUERIES = ("get_device_properties", "get_device_capability", "current_device", "device_count")
TARGET_ATTRIBUTES = frozenset({"active", "get_current_target", "backend", "arch", "warp_size", "utils",
                               "get_device_properties", "get_current_device", "name", "major",
                               "minor", "multi_processor_count", "total_memory", "L2_cache_size",
                               "regs_per_multiprocessor", "max_threads_per_multi_processor", "max_threads_per_block",
                               "shared_memory_per_block", "shared_memory_per_block_optin",
                               "shared_memory_per_multiprocessor", "clock_rate", "memory_clock_rate",
                               "memory_bus_width"})
# What host code may read of the values it gets: Triton's, plus what a heuristic reads of a tensor argument, and a
# dict's reads (an early_config_prune's `config.kwargs.get("SPLIT_K", 1)`). Not a
# descriptor's load and store, which host code never has (and numpy and torch name their file readers so). Not
# data_ptr: the address a GPU would give the tensor is not the grader's to know, and a heuristic that chose by it
# could choose one way here and another on the GPU (Triton specializes on 16-byte alignment itself).
HOST_VALUE_ATTRIBUTES = (VALUE_ATTRIBUTES - {"load", "store"} | TARGET_ATTRIBUTES | {
    "stride", "element_size", "ndim", "dim", "nelement", "is_contiguous", "itemsize", "size",
    "storage_offset", "bit_length",
    "is_floating_point", "kwargs", "num_warps", "num_stages", "eps", "tiny", "bits", "resolution", "smallest_normal",
    "get", "items", "keys"}) - {"sort"}  # tl.tensor's sort, which sorts a Python list in place
# A list host code may grow: one the function makes itself (`pruned_configs = []`, then `.append(config)` in a loop,
# as Triton's own matmul pruner was written). Growing any other would keep state from one call to the next: a
# pruner that kept a wrong configuration off the CPU check's launches and let it on later ones.
LIST_GROWTH = ("append", "extend")

_KERNEL_NODES = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.While, ast.If, ast.Expr, ast.Pass, ast.Break,
                 ast.Continue, ast.Return, ast.Assert, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.IfExp,
                 ast.Call, ast.Constant, ast.Attribute, ast.Subscript, ast.Starred, ast.Name, ast.List, ast.Tuple,
                 ast.Slice, ast.JoinedStr, ast.FormattedValue, ast.keyword, ast.expr_context, ast.boolop, ast.operator,
                 ast.unaryop, ast.cmpop, ast.ListComp, ast.comprehension)
_HOST_NODES = _KERNEL_NODES + (ast.Dict, ast.Set, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NOT_TRITON = "is not part of Triton's kernel language (the GPU compiler rejects it)"
NOT_TRITON_ADVICE = {
    ast.Import: "Imports are not allowed inside a kernel (the GPU compiler rejects them): import at the top of the "
                "file.",
    ast.ImportFrom: "Imports are not allowed inside a kernel (the GPU compiler rejects them): import at the top of "
                    "the file.",
    ast.Raise: "`raise` is not part of Triton's kernel language: to check a condition use tl.device_assert or "
               "tl.static_assert.",
    ast.Try: "`try` is not part of Triton's kernel language (the GPU compiler rejects it).",
    ast.With: "`with` is not part of Triton's kernel language (the GPU compiler rejects it).",
    ast.FunctionDef: "A function defined inside a kernel is not part of Triton's kernel language: define it at the "
                     "top of the file with @triton.jit and call it.",
    ast.Lambda: "A lambda is not part of Triton's kernel language: write a @triton.jit function.",
}


def _article(what):
    words = {"ListComp": "a list comprehension", "GeneratorExp": "a generator expression", "Dict": "a dict",
             "Set": "a set", "NamedExpr": "`:=`", "Global": "`global`", "Nonlocal": "`nonlocal`", "Delete": "`del`",
             "ClassDef": "a class", "Yield": "`yield`", "Await": "`await`", "SetComp": "a set comprehension",
             "DictComp": "a dict comprehension", "AsyncFunctionDef": "an async function"}
    return words.get(what, f"`{what}`")


@dataclass
class Problem:
    """Why a definition is refused: where (a line of its source), the code, and why, in words a student acts on.
    `host`: it is host code the grader does not run (where the GPU might take it), not a kernel that is not
    Triton. `whole_kernel`: found in a pruner, it refuses the kernel rather than leave the pruner unrun (the pruner
    would run on a GPU, and what the grader cannot check there it must not pass)."""
    line: int
    code: str
    message: str
    host: bool = False
    whole_kernel: bool = False

    def describe(self, source):
        return f"{source.where(self.line)}: {self.code}\n{self.message}" if self.code else \
            f"{source.where(self.line)}: {self.message}"


@dataclass(frozen=True)
class Known:
    """A Python object the grader resolved without running anything: a module, tl.float32, math.log2."""
    obj: object


@dataclass(frozen=True, eq=False)
class Sibling:
    """A module of another file of the same submission folder (`import helpers`)."""
    definitions: object


# Enumerations of Triton's IR that triton.language gives as its own (tl.PropagateNan.ALL): they and their members.
LANGUAGE_ENUMS = (tl.PropagateNan,)


def kernel_object(value):
    """True for what a kernel may name: triton.language and math (and their contents), numbers, strings,
    Triton's dtypes and constants, and triton's decorators and launch helpers."""
    if isinstance(value, types.ModuleType):
        return value.__name__ in ("math", "triton") or value.__name__.startswith("triton.language")
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (tl.dtype, tl.constexpr) + LANGUAGE_ENUMS) or any(value is enum for enum in LANGUAGE_ENUMS):
        return True
    if any(value is getattr(triton, name, None) for name in TRITON_TOP_LEVEL):
        return True
    if callable(value):
        # A @jit helper of triton.language is a JITFunction, or an InterpretedFunction when TRITON_INTERPRET was
        # set at import: its own function tells where it comes from.
        inner = getattr(value, "fn", None) if type(value).__module__.startswith("triton.runtime") else None
        function = inner if callable(inner) else value
        module = getattr(function, "__module__", None) or ""
        if module == "math":
            return True
        # Of triton.language, its language only: the builtins, the @jit helpers, the types, and libdevice's names
        # (stubs the compiler and the interpreter replace). Its plain Python helpers run on the host, with real
        # builtins: tl.str_to_ty evaluates a string (it ran a submission's payload in the worker).
        return module.startswith("triton.language") and (
            tl.core.is_builtin(function) or isinstance(value, (JITCallable, InterpretedFunction, type)) or
            module == "triton.language.extra.libdevice")
    return False


def host_object(value):
    """True for what host code the grader runs for a kernel (a constant's value, a heuristic) may name: what a
    kernel may, the numeric facts of torch and numpy (their dtypes, finfo and iinfo, numpy's ufuncs), itertools'
    combinators, and what torch.cuda tells of the GPU (TORCH_CUDA_QUERIES)."""
    if kernel_object(value):
        return True
    if isinstance(value, types.ModuleType):
        return value.__name__ in HOST_MODULES + ("triton.runtime", "torch.cuda")
    if value is triton.runtime.driver:
        return True
    if any(value is getattr(itertools, name) for name in HOST_ITERTOOLS):
        return True
    torch, numpy = sys.modules.get("torch"), sys.modules.get("numpy")
    if torch is not None and (isinstance(value, torch.dtype) or value is torch.finfo or value is torch.iinfo):
        return True
    if torch is not None and any(value is getattr(torch.cuda, name) for name in TORCH_CUDA_QUERIES):
        return True
    if numpy is not None and (value is numpy.finfo or value is numpy.iinfo or isinstance(value, numpy.ufunc) or
                              isinstance(value, type) and issubclass(value, numpy.generic)):
        return True
    return False


def static_attribute(obj, name, host=False):
    """obj.name resolved without running any descriptor (a submodule of triton.language is imported), or
    None when it does not exist or is not something a kernel (or, with `host`, host code) may use."""
    if name.startswith("_"):
        return None
    try:
        value = inspect.getattr_static(obj, name)
    except AttributeError:
        value = None
        if isinstance(obj, types.ModuleType) and hasattr(obj, "__path__"):
            try:  # a submodule not imported yet, e.g. triton.language.extra.cuda
                value = importlib.import_module(f"{obj.__name__}.{name}")
            except ImportError:
                return None
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return value if (host_object(value) if host else kernel_object(value)) else None


def import_known(module_name):
    """The module `import module_name` gives, when it is one a submission's code the grader runs may import;
    else None."""
    if module_name.split(".")[0] not in ("triton", "math") + HOST_MODULES:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return module if host_object(module) else None


class Checker:
    """Checks one definition against the rules, in the namespace of its module (a Namespace)."""

    def __init__(self, namespace, host, local_names=()):
        self.namespace = namespace
        self.host = host
        self.allowed_nodes = _HOST_NODES if host else _KERNEL_NODES
        self.builtins = HOST_BUILTINS if host else KERNEL_BUILTINS
        self.value_attributes = HOST_VALUE_ATTRIBUTES if host else VALUE_ATTRIBUTES
        self.locals = set(local_names)
        self.own_lists = set()  # the locals a function binds once, to a list it makes: those it may grow
        self.early = set()  # ids of the Name nodes that read a local before it is certainly assigned (body)
        self.bases = set()  # ids of the nodes read as `node.name` or getattr(node, "name"), where a module may be
        self.problems = []
        self.used = []  # the module-level Bindings the definition reads: its dependencies

    def refuse(self, node, message, host=None):
        self.problems.append(Problem(getattr(node, "lineno", 0), _text(node), message,
                                     self.host if host is None else host))

    # --- definitions -------------------------------------------------------------------------------------------
    def signature(self, node, plain=False):
        """What a `def` evaluates when it runs: its parameters' annotations and defaults. `plain`: a function no
        decorator makes a kernel (host code, which may take *args and **kwargs: a configuration pruner's)."""
        arguments = node.args
        if not plain and (arguments.vararg or arguments.kwarg or arguments.kwonlyargs):
            self.refuse(node, "*args, **kwargs and keyword-only parameters are not supported by Triton: list every "
                              "parameter by name", host=False)  # the kernel's language, though its def runs on the host
        for argument in arguments.posonlyargs + arguments.args:
            if _dunder(argument.arg):
                self.refuse(node, f"`{argument.arg}` is one of Python's own names, not a parameter's")
            if argument.annotation is not None and not self.ignored_annotation(argument.annotation):
                self.expression(argument.annotation, host=True)
                if not self.triton_annotation(argument.annotation):
                    self.refuse(argument.annotation, "this annotation is not a Triton type (write tl.constexpr)")
        for default in arguments.defaults:
            self.expression(default, host=True)
        return self.problems

    def body(self, node):
        """What a function runs when it is called (its names are read then: the module's last bindings)."""
        arguments = node.args
        # Every parameter is a local, whichever kind signature() refuses: its refusal says why, not "not defined".
        params = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs +
                  [arguments.vararg, arguments.kwarg] if a is not None}
        self.locals |= params | _stored_names(node.body)
        self.own_lists = _own_lists(node.body, self.namespace) - params
        self.early = _reads_before_assignment(node.body, params)
        for statement in node.body[1:] if has_docstring(node) else node.body:
            self.visit(statement)
        return self.problems

    def triton_annotation(self, node):
        """Whether a parameter's annotation is one Triton reads: a string ("tl.constexpr"), Python's int, float or
        bool (Triton's i32, fp32 and u1), or a Triton object the grader resolves."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        if isinstance(node, ast.Name) and node.id in PYTHON_SCALAR_TYPES:
            return node.id not in self.locals and node.id not in self.namespace
        return isinstance(self.resolve(node), Known)

    def ignored_annotation(self, node):
        """Whether a parameter's annotation is one Triton ignores: an attribute of torch (torch.Tensor), whose name
        Triton reads as no type of its own. The rebuilt module leaves it out (module.py), as it leaves out a return
        annotation, and nothing of it runs. Any other annotation the grader cannot resolve is refused: numpy's
        types Triton reads by their names (np.int8 is i8), and a name the grader cannot follow (C = tl.constexpr)
        may be one Triton reads."""
        while isinstance(node, ast.Attribute):
            node = node.value
        root = self.resolve(node) if isinstance(node, ast.Name) else None
        return isinstance(root, Known) and getattr(root.obj, "__name__", None) == "torch"

    def expression(self, node, host=None):
        """A host expression: a constant's value, a default, a heuristic, configurations."""
        saved = (self.host, self.allowed_nodes, self.builtins, self.value_attributes)
        if host:
            self.host, self.allowed_nodes = True, _HOST_NODES
            self.builtins, self.value_attributes = HOST_BUILTINS, HOST_VALUE_ATTRIBUTES
        try:
            self.visit(node)
        finally:
            self.host, self.allowed_nodes, self.builtins, self.value_attributes = saved
        return self.problems

    def heuristic(self, node):
        """A value of @triton.heuristics({...}): `lambda args: ...` or a module-level function's name."""
        if isinstance(node, ast.Lambda):
            arguments = node.args
            if arguments.vararg or arguments.kwarg or len(arguments.args) != 1 or arguments.defaults or \
                    arguments.posonlyargs or arguments.kwonlyargs or _dunder(arguments.args[0].arg):
                self.refuse(node, "a heuristic is `lambda args: ...`, one parameter")
                return self.problems
            self.locals.add(arguments.args[0].arg)
            return self.expression(node.body, host=True)
        binding = self.namespace.get(node.id) if isinstance(node, ast.Name) else None
        if binding is None or binding.kind != "function":
            self.refuse(node, "a heuristic is `lambda args: ...` or a function of the module")
            return self.problems
        self.used.append(binding)
        return self.problems

    # --- the walk ----------------------------------------------------------------------------------------------
    def visit(self, node):
        if isinstance(node, ast.Raise) and not self.host:
            self.visit_Raise(node)
            return
        if not isinstance(node, self.allowed_nodes):
            what = type(node).__name__
            if self.host:
                self.refuse(node, f"{_article(what)} is not something the grader evaluates for a submission")
            else:
                self.refuse(node, NOT_TRITON_ADVICE.get(type(node), f"{_article(what)} {_NOT_TRITON}"))
            return
        getattr(self, f"visit_{type(node).__name__}", self.generic_visit)(node)

    def visit_Raise(self, node):
        if "NotImplementedError" in _text(node):
            self.refuse(node, "This is still the skeleton: replace `raise NotImplementedError()` with your kernel.")
        else:
            self.refuse(node, NOT_TRITON_ADVICE[ast.Raise])

    def generic_visit(self, node):
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def visit_Constant(self, node):
        if not isinstance(node.value, (bool, int, float, str, type(None), type(Ellipsis))):
            self.refuse(node, "this constant is not a number or a string")
        elif isinstance(node.value, str) and len(node.value) > STRING_LIMIT:
            self.refuse(node, "a string longer than the grader reads in a kernel")

    def visit_Name(self, node):
        if _dunder(node.id):
            self.refuse(node, f"`{node.id}` is one of Python's own names, not something a submission's code uses")
            return
        if isinstance(node.ctx, ast.Load) and node.id in self.locals and id(node) in self.early and \
                (node.id in self.namespace or node.id in COMPILER_BUILTINS):
            # Python would raise here (UnboundLocalError), where the kernel ever gets: Triton's compiler, which reads
            # each name when it comes to it, once, in order, reads the module's or its own built-in instead.
            self.refuse(node, f"`{node.id}` is read here before the kernel assigns it: Triton's compiler would read "
                              f"the {'module' if node.id in self.namespace else 'built-in'} `{node.id}` instead. "
                              "Assign it first, or give the variable a name of its own")
            return
        if not isinstance(node.ctx, ast.Load) or node.id in self.locals:
            return
        binding = self.namespace.get(node.id)
        if binding is not None:
            self.use(node, binding, f"`{node.id}`")
            self.module_kept(node)
            return
        if node.id == "breakpoint" and not self.host:
            self.refuse(node, "breakpoint() stops a kernel launched with run() in the debugger, but it is not part "
                              "of Triton's kernel language (the GPU compiler rejects it) and the check compiles the "
                              "kernel for the GPU: remove it before checking.")
        elif node.id in ATTRIBUTE_READERS and node.id in self.builtins:
            # Called, it is checked as `x.name` is (visit_Call); as a value (`g = getattr`, `map(getattr, ...)`) it
            # could read any attribute by a name computed at run time, private ones and modules' included.
            self.refuse(node, f"{node.id} can only be called, with the attribute's name written out as a string")
        elif node.id not in self.builtins:
            self.refuse(node, f"`{node.id}` is not defined" + ("" if self.host else
                              " in the kernel's module: kernels use their parameters, triton.language, math, and "
                              "the module's @triton.jit functions and constants"))

    def use(self, node, binding, what):
        """Record that the definition reads `binding`, unless it is something the grader does not run."""
        if binding.kind == "known" and not self.host and not kernel_object(binding.obj):
            self.refuse(node, f"{what} is {getattr(binding.obj, '__name__', 'a host object')}, a host library: a kernel "
                              "can only use triton.language, math, its own @triton.jit functions and constants",
                        host=False)
        elif binding.kind == "host":
            self.refuse(node, f"{what} is {binding.reason}: the grader does not run that for a submission; write it "
                              "with numbers, math, triton.language (and, outside kernels, torch's and numpy's dtypes "
                              "and limits)", host=True)
        elif binding.kind == "function" and not self.host:
            self.refuse(node, f"{what} is a plain Python function: decorate it with @triton.jit (or "
                              "@triton.constexpr_function for a compile-time helper)")
        else:
            self.used.append(binding)

    def visit_Attribute(self, node):
        if not isinstance(node.ctx, ast.Load):
            self.refuse(node, f"assigning to an attribute {_NOT_TRITON}" if not self.host else
                        "assigning to an attribute is not something the grader evaluates for a submission (in host "
                        "code it would keep state from one call to the next)")
            return
        self.bases.add(id(node.value))
        self.visit(node.value)
        self.attribute(node, self.resolve(node.value), node.attr)
        self.module_kept(node)

    def module_kept(self, node):
        """Refuse a module (or a sibling file's) held as a value. `module.name` is checked against what may be read
        of that module; a module kept in a local, a tuple, a default or a constexpr would be read as any value is,
        by attribute names that other objects have too (numpy.load reads a pickle: it ran code in the worker)."""
        if id(node) in self.bases:
            return
        resolved = self.resolve(node)
        if isinstance(resolved, Sibling) or isinstance(resolved, Known) and isinstance(resolved.obj, types.ModuleType):
            self.refuse(node, f"`{_text(node)}` is a module: use what it defines (`{_text(node)}.name`), not the "
                              "module itself")

    def attribute(self, node, base, name):
        if name.startswith("_"):
            self.refuse(node, "private attributes (`_...`) are internals of Triton or Python, not its language")
        elif isinstance(base, Sibling):
            binding = base.definitions.get(name)
            if binding is None:
                self.refuse(node, f"{base.definitions.file.name} defines no `{name}`")
            else:
                self.use(node, binding, f"`{_text(node)}`")
        elif isinstance(base, Known) and isinstance(base.obj, types.ModuleType):
            if static_attribute(base.obj, name, self.host) is None:
                self.refuse(node, f"{base.obj.__name__} has no `{name}` " + (
                    "the grader evaluates for a submission" if self.host else "a kernel may use") + (
                    f" ({BLOCK_POINTERS_GONE})" if name in ("make_block_ptr", "advance") else ""))
        elif isinstance(base, Known) and any(base.obj is enum for enum in LANGUAGE_ENUMS):
            if static_attribute(base.obj, name, self.host) is None:
                self.refuse(node, f"{_text(node.value)} has no member `{name}`")
        elif self.host and name in LIST_GROWTH:
            if not (isinstance(node.value, ast.Name) and node.value.id in self.own_lists):
                self.refuse(node, f"`.{name}` grows only a list the function makes itself, bound once "
                                  f"(`kept = []`, then `kept.{name}(...)`): state kept from one call to the next is "
                                  "not something the grader evaluates for a submission")
        elif name not in self.value_attributes:
            self.refuse(node, f"`.{name}` is not something the grader evaluates for a submission" if self.host else
                        f"`.{name}` is not part of the API of Triton's tensors and types")

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, ast.Load):
            self.refuse(node, f"assigning to an element {_NOT_TRITON}" if not self.host else
                        "assigning to an element is not something the grader evaluates for a submission (in host "
                        "code it would keep state from one call to the next): build a new list or dict instead")
            return
        self.generic_visit(node)

    def visit_Call(self, node):
        for keyword in node.keywords:
            if keyword.arg is not None and keyword.arg.startswith("_"):
                self.refuse(node, f"`{keyword.arg}=` is an internal of Triton or Python, not an argument a "
                                  "submission passes")
        reader = isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_READERS and \
            node.func.id not in self.locals and node.func.id not in self.namespace
        if reader and node.args:
            self.bases.add(id(node.args[0]))
        for child in ast.iter_child_nodes(node):
            if not (reader and child is node.func):
                self.visit(child)
        if reader:
            name = node.args[1] if len(node.args) >= 2 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) or node.keywords:
                self.refuse(node, f"{node.func.id} needs an attribute name written out as a string")
            else:
                self.attribute(node, self.resolve(node.args[0]), name.value)

    def visit_comprehension(self, node):
        # Its iterable first, where its own target is not bound yet: the first one is read in the enclosing scope.
        self.visit(node.iter)
        self.locals |= _stored_names([node.target])
        self.visit(node.target)
        for condition in node.ifs:
            self.visit(condition)

    def visit_ListComp(self, node):
        if not self.host and isinstance(node, ast.ListComp) and not self.kernel_comprehension(node):
            return
        # A comprehension's loop variables are its own (Python 3): outside it, the same names are the module's.
        saved = set(self.locals)
        for generator in node.generators:  # the loop variables first: the element reads them
            self.visit(generator)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.visit(part)
        self.locals = saved

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def kernel_comprehension(self, node):
        """Whether a list comprehension in a kernel is one every supported Triton compiles alike: one loop over a
        tuple, its variable a name, no `if` (Triton 3.6 drops the filter, 3.9 applies it); refuses the others."""
        generator = node.generators[0]
        if len(node.generators) > 1 or generator.is_async:
            self.refuse(node, "Triton compiles a comprehension of one `for` only: write one comprehension per loop")
        elif not isinstance(generator.target, ast.Name):
            self.refuse(node, "Triton 3.6 compiles a comprehension whose loop variable is one name only "
                              "(`[f(p) for p in pairs]`, then unpack `p` in the element)")
        elif generator.target.id in self.locals:
            self.refuse(node, "Triton binds a comprehension's variable in the kernel itself (after it, "
                              f"`{generator.target.id}` is the last element's, in Python the kernel's own): give it "
                              "a name of its own")
        elif generator.ifs:
            self.refuse(node, "an `if` in a comprehension inside a kernel is dropped by Triton 3.6 and applied by "
                              "later versions: build the tuple without it (its elements a tuple of the ones you want)")
        else:
            return True
        return False

    # --- static resolution -------------------------------------------------------------------------------------
    def resolve(self, node):
        """Known(object) for a name or attribute chain the grader can resolve without running anything, Sibling
        for a sibling file's module, else None."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return None
            binding = self.namespace.get(node.id)
            if binding is None:
                return None
            if binding.kind == "known":
                return Known(binding.obj)
            return Sibling(binding.obj) if binding.kind == "sibling" else None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, Known) and isinstance(base.obj, types.ModuleType):
                value = static_attribute(base.obj, node.attr, self.host)
                return Known(value) if value is not None else None
            if isinstance(base, Sibling):
                binding = base.definitions.get(node.attr)
                if binding is not None and binding.kind == "known":
                    return Known(binding.obj)
        return None


def resolve_decorator(node, namespace):
    """(the triton object a decorator names, its call or None) without running anything, or (None, None)."""
    call = node if isinstance(node, ast.Call) else None
    resolved = Checker(namespace, host=True).resolve(call.func if call else node)
    return (resolved.obj, call) if isinstance(resolved, Known) else (None, None)


def is_skeleton(function):
    """True for a kernel nobody has written yet: only a docstring, `pass`, `...` or `raise NotImplementedError`."""
    for statement in function.body:
        if isinstance(statement, ast.Pass) or isinstance(statement, ast.Expr) and \
                isinstance(statement.value, ast.Constant):
            continue
        if isinstance(statement, ast.Raise) and "NotImplementedError" in _text(statement):
            continue
        return False
    return True


def has_docstring(function):
    first = function.body[0] if function.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


# The names Triton's compiler resolves beyond a kernel's locals and its module: Python's built-ins and its own.
COMPILER_BUILTINS = frozenset(dir(builtins)) | {"static_print", "static_assert", "device_print"}


def _reads_before_assignment(statements, params):
    """ids of the Name nodes of a function's body that read one of its local names where the function has not
    certainly assigned it yet, as Triton's compiler goes through a body: once, in order; each branch of an `if`
    from the names before it, and after it the names both assign; a loop's body from the names before it, and
    after it only those (it may not run)."""
    early = set()

    def reads(node, assigned):
        pending = [(node, assigned)]
        while pending:
            node, known = pending.pop()
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
                early.add(id(node))
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                known = known | _stored_names([generator.target for generator in node.generators])
            if not isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                pending.extend((child, known) for child in ast.iter_child_nodes(node))

    def block(body, assigned):
        for statement in body:
            assigned = step(statement, assigned)
        return assigned

    def step(statement, assigned):
        if isinstance(statement, ast.If):
            reads(statement.test, assigned)
            return assigned | (block(statement.body, assigned) & block(statement.orelse, assigned))
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            reads(statement.iter, assigned)
            block(statement.body, assigned | _stored_names([statement.target]))
            block(statement.orelse, assigned)
            return assigned
        if isinstance(statement, ast.While):
            reads(statement.test, assigned)
            block(statement.body, assigned)
            block(statement.orelse, assigned)
            return assigned
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                reads(item.context_expr, assigned)
                assigned = assigned | _stored_names([item.optional_vars] if item.optional_vars else [])
            return block(statement.body, assigned)
        if isinstance(statement, ast.AugAssign):
            reads(statement.value, assigned)
            if isinstance(statement.target, ast.Name):
                if statement.target.id not in assigned:
                    early.add(id(statement.target))
                return assigned | {statement.target.id}
            reads(statement.target, assigned)
            return assigned
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            if statement.value is not None:
                reads(statement.value, assigned)
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                reads(target, assigned)  # a subscript's or an attribute's base is read
            return assigned | _stored_names(targets)
        reads(statement, assigned)
        return assigned | _stored_names([statement])

    block(statements, frozenset(params))
    return early


def _stored_names(statements):
    """Every name a block of statements binds (Python makes each a local of the function), not the loop
    variables of its comprehensions nor what a nested function or lambda binds: those have scopes of their own."""
    names, pending = set(), list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if not isinstance(node, NESTED_SCOPES):
            pending.extend(ast.iter_child_nodes(node))
    return names


# Host code's `name op= value` where `name` may hold an object made elsewhere (`whole = named_args["N"]`, then
# `whole -= ...`) runs as `name = __augmented__(name, "Sub", value, "name")` (module.py rebuilds it so): the rules
# cannot tell an int from a tensor or a module's list, which `-=` would change in place for other calls to see.
AUGMENTED_ASSIGNMENT = "__augmented__"
_OPERATIONS = {"Add": ("+", "add"), "Sub": ("-", "sub"), "Mult": ("*", "mul"), "MatMult": ("@", "matmul"),
               "Div": ("/", "truediv"), "FloorDiv": ("//", "floordiv"), "Mod": ("%", "mod"), "Pow": ("**", "pow"),
               "LShift": ("<<", "lshift"), "RShift": (">>", "rshift"), "BitOr": ("|", "or"), "BitXor": ("^", "xor"),
               "BitAnd": ("&", "and")}


class HostCodeStopped(TypeError):
    """The kernel's host code (a pruner, a heuristic, a @triton.constexpr_function) did what a GPU would run and the
    grader cannot check: the puzzle stops there, at that host code's line where it has one."""


class ChangedInPlace(HostCodeStopped):
    """Host code's augmented assignment would change an object in place (augmented_assignment)."""


def augmented_assignment(value, operation, operand, name):
    """What `name op= operand` binds `name` to, where `name` held `value`: `value op operand`, which is what Python
    binds it to for every object that has no in-place form of the operation (numbers, strings, tuples); raises
    ChangedInPlace for one that has (a list, a dict, a tensor), which it would change in place."""
    symbol, method = _OPERATIONS[operation]
    if hasattr(type(value), f"__i{method}__"):
        raise ChangedInPlace(f"`{name} {symbol}= ...` would change the {type(value).__name__} `{name}` holds in place, "
                             f"for the launch and later calls to see: write `{name} = {name} {symbol} ...`, a new value")
    return getattr(operator, method if method not in ("and", "or") else f"{method}_")(value, operand)


# What an assignment binds a name to that is a new object, never one that exists elsewhere: `x += ...` on such a
# name changes nothing another call sees (on a list bound elsewhere it would extend that list in place).
NEW_VALUES = (ast.Constant, ast.List, ast.ListComp, ast.Tuple, ast.Dict, ast.DictComp, ast.Set, ast.SetComp,
              ast.BinOp, ast.Compare, ast.JoinedStr)  # not UnaryOp: torch's +tensor is the tensor itself


def _bound_only_to(statements, makes_new):
    """The names every binding of which in a block of statements, its comprehensions' included (a comprehension's
    name may stand for anything), is an assignment of a value `makes_new` accepts, augmented assignments aside."""
    module = ast.Module(body=list(statements), type_ignores=[])
    augmented = {id(node.target) for node in ast.walk(module) if isinstance(node, ast.AugAssign)}
    stores = [node for node in ast.walk(module)
              if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in augmented]
    made = {id(target) for statement in ast.walk(module)
            if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None
            and makes_new(statement.value)
            for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])}
    return {store.id for store in stores} - {store.id for store in stores if id(store) not in made}


NEW_OBJECT_BUILTINS = ("list", "dict", "set", "tuple", "sorted")


def bound_to_new_values(function, namespace=()):
    """The names a function binds to new objects alone (NEW_VALUES, or a call of a builtin that makes one; the
    module's `namespace` may hide it): its `x op= ...` on them changes nothing another call sees. A parameter counts
    where the function binds it so before anything augments it (`configs = [c for c in configs if ...]` first)."""
    def makes_new(value):
        return isinstance(value, NEW_VALUES) or _calls_builtin(value, NEW_OBJECT_BUILTINS, namespace)
    params = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    return _bound_only_to(function.body, makes_new) - {name for name in params
                                                       if not _bound_before_augmented(function.body, name)}


def _bound_before_augmented(statements, name):
    """Whether one of `statements` binds `name` alone, by an assignment, before any augments it."""
    for statement in statements:
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        if targets and all(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
        if any(isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name
               for node in ast.walk(statement)):
            return False
    return False


def _own_lists(statements, namespace=()):
    """The names a block of statements binds to new lists alone: a list display or comprehension, or a call of the
    builtin list() (`namespace`: the module's names, which may hide it)."""
    return _bound_only_to(statements, lambda value: isinstance(value, (ast.List, ast.ListComp)) or
                          _calls_builtin(value, ("list",), namespace))


def _calls_builtin(value, names, namespace):
    """Whether `value` is a call of one of the builtins `names`, which the module's `namespace` does not hide."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in names and \
        value.func.id not in namespace


NESTED_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.FunctionDef,
                 ast.AsyncFunctionDef, ast.ClassDef)


def _dunder(name):
    """`__builtins__`, `__class__`, ...: Python's own names, which only reach into the interpreter."""
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _text(node, limit=80):
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        return type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def stdlib_or_installed(name):
    """True when `name` is a real module (a sibling file of that name would shadow it): it is not a sibling."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    # The grader's own working directory is not where the student's files would be imported from.
    path = [p for p in sys.path if p not in ("", os.getcwd())]
    return importlib.machinery.PathFinder.find_spec(name, path) is not None
