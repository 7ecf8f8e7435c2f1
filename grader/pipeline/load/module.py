"""The module a kernel runs in, rebuilt from the syntax tree of what the submission defines.

A file (or a notebook, or a live session's cells) is read statement by statement in the order it runs, and
each module-level name gets a Binding: an import of triton or math, a constant, a @triton.jit or
@triton.constexpr_function function, a sibling file's module, or "host" for anything the grader does not
run (an import of torch, a tensor, a plain function, whatever a loop or a `try` binds). As in Python, the
last binding of a name wins, a constant's value is fixed when its statement runs, and a function reads the
module's names when it is called.

For a kernel, only its closure is rebuilt: the function, what it calls, the constants and imports they read,
each checked against rules.py. Every statement is regenerated from its checked syntax tree with
`ast.unparse`, one statement at a time, never copied from the student's text, so nothing hidden on the same
line, behind a line break Python does not break on, in a default value or in an annotation comes along. Each
line of the result remembers where the student wrote it, for reports.
"""
import ast
import copy
import io
import operator
import tokenize
from dataclasses import dataclass, field

import triton
import triton.language as tl

from .files import run_magic_module
from .rules import (AUGMENTED_ASSIGNMENT, Checker, Known, Problem, bound_to_new_values, has_docstring, import_known,
                    is_skeleton, resolve_decorator, static_attribute)

TUNING_NAME = "GPU_CONFIGS"  # configurations for the GPU stage declared beside the kernel, read as data
MAIN = "<main>"  # the rebuilt module of the graded file: not an identifier, so no sibling file can take its name
JIT_OPTIONS = ("do_not_specialize", "do_not_specialize_on_alignment", "noinline", "debug")


@dataclass(eq=False)
class Binding:
    """What a module-level name is bound to, and the statement that binds it."""
    kind: str  # known, constant, tuning, jit, constexpr_function, function, sibling, host
    name: str
    module: "ModuleDefinitions"
    statement: ast.stmt = None  # the statement to rebuild (an import is narrowed to this name)
    order: tuple = (0, 0)  # (source, statement) position: the order the module runs it in
    obj: object = None  # known: the object; sibling: the sibling's ModuleDefinitions
    reason: str = None  # host: why the grader does not run it, in words ("`import torch`")
    depends: list = field(default_factory=list)  # what its statement reads when it runs (a constant's value, a
    # def's decorators, annotations and defaults)
    problems: list = field(default_factory=list)  # why what its statement reads cannot be used (rules.Problem)
    function: ast.FunctionDef = None  # jit, constexpr_function, function: the def
    jit: dict = None  # jit: {"call": the jit decorator's call, "heuristics": [...], "configs": expression}
    target: "Binding" = None  # an alias, or a name imported from a sibling: what it names
    jitted: bool = False  # function: a plain def that `kernel = triton.jit(def)` makes a kernel

    @property
    def source(self):
        return self.module.sources[self.order[0]]

    def resolved(self):
        """The binding an alias or a sibling import finally names."""
        binding, seen = self, set()
        while binding.target is not None and id(binding) not in seen:
            seen.add(id(binding))
            binding = binding.target
        return binding


class ModuleDefinitions:
    """The module-level names of one file, read in the order the file runs."""

    def __init__(self, file, siblings=None, reading=(), read=None):
        self.file = file
        self.sources = file.sources
        self.siblings = siblings or {}  # import name -> SubmissionFile of the same submission folder
        self.reading = reading + (file.module_name,)
        self.read = read if read is not None else {}  # import name -> ModuleDefinitions, shared by a submission
        if file.module_name:
            self.read[file.module_name] = self
        self.names = {}
        self.bound_again = set()  # names bound more than once (which binding a use sees depends on when it runs)
        self.jit_definitions = {}  # name -> every jit Binding of it, in order (drafts included)
        for index, source in enumerate(self.sources):
            if source.tree is None:
                continue
            for position, statement in enumerate(source.tree.body):
                self._statement(statement, (index, position))

    def get(self, name):
        return self.names.get(name)

    def __contains__(self, name):
        return name in self.names

    # --- reading the statements in order -----------------------------------------------------------------------
    def _bind(self, binding):
        if binding.name in self.names:
            self.bound_again.add(binding.name)
        self.names[binding.name] = binding
        if binding.kind == "jit":
            self.jit_definitions.setdefault(binding.name, []).append(binding)

    def _host(self, name, statement, order, reason):
        self._bind(Binding("host", name, self, statement, order, reason=reason))

    def _statement(self, statement, order):
        run = _run_magic_of_sibling(statement, self.siblings)
        if run is not None:  # %run helpers.py: its definitions join the notebook's, as `from helpers import *`
            statement = ast.copy_location(ast.ImportFrom(module=run, names=[ast.alias(name="*")], level=0), statement)
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            for binding in self._imports(statement, order):
                self._bind(binding)
        elif isinstance(statement, ast.Try) and _only_imports(statement.body):
            # try: from triton.language.extra.cuda import libdevice / except ImportError: ... (version shims)
            bindings = [b for s in statement.body for b in self._imports(s, order)]
            if any(b.kind == "host" for b in bindings):
                for handler in statement.handlers:
                    if _only_imports(handler.body):
                        bindings = [b for s in handler.body for b in self._imports(s, order)]
                        break
            for binding in bindings:
                self._bind(binding)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and _assigned_names(statement):
            self._assignment(statement, order)
        elif isinstance(statement, ast.AnnAssign) and statement.value is None and \
                isinstance(statement.target, ast.Name):
            pass  # `SCALE: tl.constexpr` alone binds nothing (and its annotation means nothing to Triton)
        elif isinstance(statement, ast.FunctionDef):
            self._function(statement, order)
        else:
            for name in _bound_names(statement):
                self._host(name, statement, order, f"set by `{_first_line(statement)}`, which the grader does not run")

    def _imports(self, statement, order):
        bindings = []
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                name = alias.asname or alias.name.split(".")[0]
                narrowed = ast.copy_location(ast.Import(names=[alias]), statement)
                module = import_known(alias.name if alias.asname else alias.name.split(".")[0])
                if module is not None and import_known(alias.name) is not None:
                    bindings.append(Binding("known", name, self, narrowed, order, obj=module))
                elif alias.name in self.siblings:
                    bindings.append(self._sibling_module(name, alias.name, narrowed, order))
                else:
                    bindings.append(Binding("host", name, self, narrowed, order,
                                            reason=f"imported by `import {alias.name}`"))
            return bindings
        module_name = statement.module or ""
        if statement.level in (0, 1) and module_name in self.siblings:
            sibling = self._sibling_module(module_name, module_name, None, order)
            names = statement.names
            if [alias.name for alias in names] == ["*"] and sibling.kind == "sibling":
                names = [ast.alias(name=defined) for defined in sibling.obj.names if not defined.startswith("_")]
            for alias in names:
                name = alias.asname or alias.name
                narrowed = ast.copy_location(ast.ImportFrom(module=module_name, names=[alias], level=0), statement)
                target = sibling.obj.get(alias.name) if sibling.kind == "sibling" else None
                if target is None:
                    reason = sibling.reason if sibling.kind == "host" else f"not defined in {module_name}.py"
                    bindings.append(Binding("host", name, self, narrowed, order, reason=f"`{name}`: {reason}"))
                else:
                    bindings.append(Binding(target.kind, name, self, narrowed, order, target=target,
                                            reason=target.reason, depends=[sibling]))
            return bindings
        module = import_known(module_name) if statement.level == 0 else None
        for alias in statement.names:
            name = alias.asname or alias.name
            narrowed = ast.copy_location(ast.ImportFrom(module=module_name, names=[alias], level=0), statement)
            if alias.name == "*":
                for public in dir(module) if module is not None else ():
                    value = static_attribute(module, public, host=True)
                    if value is not None:
                        bindings.append(Binding("known", public, self, narrowed, order, obj=value))
                continue
            value = static_attribute(module, alias.name, host=True) if module is not None else None
            if value is None:
                bindings.append(Binding("host", name, self, narrowed, order,
                                        reason=f"imported by `from {'.' * statement.level}{module_name} import "
                                               f"{alias.name}`"))
            else:
                bindings.append(Binding("known", name, self, narrowed, order, obj=value))
        return bindings

    def _sibling_module(self, name, module_name, statement, order):
        file = self.siblings.get(module_name)
        if file is None:
            return Binding("host", name, self, statement, order, reason=f"imported from {module_name}")
        if module_name in self.reading:
            return Binding("host", name, self, statement, order, reason=f"a circular import of {module_name}")
        if file.problems:
            return Binding("host", name, self, statement, order,
                           reason=f"from {file.name}, which could not be read: {file.problems[0]}")
        definitions = self.read.get(module_name) or ModuleDefinitions(file, self.siblings, self.reading, self.read)
        return Binding("sibling", name, self, statement, order, obj=definitions)

    def _assignment(self, statement, order):
        names = _assigned_names(statement)
        value = statement.value
        if names == [TUNING_NAME]:
            checker = Checker(self, host=True)
            checker.expression(value)
            if checker.problems:
                self._host(TUNING_NAME, statement, order, f"`{_first_line(statement)}` ({checker.problems[0].code}: "
                                                          f"{checker.problems[0].message})")
            else:
                self._bind(Binding("tuning", TUNING_NAME, self, statement, order, depends=checker.used))
            return
        if len(names) == 1 and isinstance(value, ast.Name) and value.id in self.names:
            target = self.names[value.id]  # an alias: kernel = add_kernel, my_jit = triton.jit
            if target.kind in ("jit", "constexpr_function", "known", "function"):
                self._bind(Binding(target.kind, names[0], self, statement, order, obj=target.obj, target=target,
                                   depends=[target]))
                return
        sibling = self.names.get(value.value.id) if isinstance(value, ast.Attribute) and \
            isinstance(value.value, ast.Name) else None
        if len(names) == 1 and sibling is not None and sibling.kind == "sibling":
            target = sibling.obj.get(value.attr)  # an alias of a sibling file's function: kernel = mykern.fast_add
            if target is not None and target.kind in ("jit", "constexpr_function", "function"):
                self._bind(Binding(target.kind, names[0], self, statement, order, obj=target.obj, target=target,
                                   depends=[sibling, target]))
                return
        if len(names) == 1 and self._decorated(names[0], value, order):
            return
        if len(names) == 1 and isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and \
                isinstance(value.args[0], ast.Name) and self.names.get(value.args[0].id) is not None:
            decorator, _ = resolve_decorator(value.func, self)
            wrapped = self.names[value.args[0].id]
            if decorator is triton.jit and wrapped.kind == "function":  # add_kernel = triton.jit(add)
                function = wrapped.resolved()
                if function.module is not self:  # from helpers import add: a def read in its own file's names
                    self._host(names[0], statement, order, f"triton.jit of `{value.args[0].id}`, a def of another "
                                                           "file: write @triton.jit above the def in its file")
                    return
                function.jitted = True
                checker = Checker(self, host=True)
                checker.expression(value.func)
                checker.signature(function.function)  # a kernel's now: every parameter by name
                self._bind(Binding("jit", names[0], self, statement, order, function=function.function,
                                   depends=checker.used, problems=checker.problems,
                                   jit={"call": None, "heuristics": [], "configs": None,
                                        "wrapped": wrapped, "decorators": [value.func]}))
                return
        checker = Checker(self, host=True)
        checker.expression(value)
        if checker.problems:
            for name in names:
                self._host(name, statement, order, f"set by `{_first_line(statement)}`, which the grader does not "
                                                   f"evaluate ({checker.problems[0].code}: "
                                                   f"{checker.problems[0].message.rstrip('.')})")
            return
        for name in names:
            self._bind(Binding("constant", name, self, statement, order, depends=checker.used))

    def _decorated(self, name, value, order):
        """Bind `name = triton.autotune(...)(triton.heuristics({...})(fn))` (any chain of Triton's decorators applied
        as calls to a function of this module) as the same function decorated so under `name`, which is what it
        is to Triton; False for any other value."""
        decorators = []
        while isinstance(value, ast.Call) and len(value.args) == 1:
            # triton.jit(fn, do_not_specialize=[...]) is @triton.jit(do_not_specialize=[...]) on fn
            decorators.append(ast.copy_location(ast.Call(func=value.func, args=[], keywords=value.keywords), value)
                              if value.keywords else value.func)
            value = value.args[0]
        wrapped = self.names.get(value.id) if decorators and isinstance(value, ast.Name) else None
        if wrapped is not None and wrapped.kind == "jit" and "wrapped" in (wrapped.jit or {}):
            # _jitted = triton.jit(fn) first, then k = triton.autotune(...)(_jitted)
            decorators += list(wrapped.jit["decorators"])
            wrapped = wrapped.jit["wrapped"]
        if wrapped is None or wrapped.kind not in ("function", "jit") or \
                not isinstance(wrapped.statement, ast.FunctionDef) or wrapped.statement is not wrapped.function:
            return False
        objects = [resolve_decorator(d, self)[0] for d in decorators]
        if objects == [triton.jit] and wrapped.kind == "function" and not isinstance(decorators[0], ast.Call):
            return False  # add_kernel = triton.jit(add): bound below, `add` kept as it is
        if not all(obj in (triton.jit, triton.heuristics, triton.autotune) for obj in objects):
            return False
        function = copy.copy(wrapped.function)
        function.name, function.decorator_list = name, decorators + list(wrapped.function.decorator_list)
        self._function(function, order)
        return True

    def _function(self, statement, order):
        signature = Checker(self, host=True)
        signature.signature(statement, plain=not statement.decorator_list)
        if not statement.decorator_list:
            self._bind(Binding("function", statement.name, self, statement, order, function=statement,
                               depends=signature.used, problems=signature.problems))
            return
        resolved = [resolve_decorator(d, self) for d in statement.decorator_list]
        objects = [obj for obj, _ in resolved]
        kernel = triton.jit in objects
        for decorator, obj in zip(statement.decorator_list, objects):  # evaluated when the def runs
            if kernel and obj in (triton.jit, triton.heuristics, triton.autotune) and isinstance(decorator, ast.Call):
                # Rebuilt from their checked parts: jit's options, the heuristics' one dict, no autotune at all.
                signature.expression(decorator.func)
            else:  # rebuilt as written: every argument is checked
                signature.expression(decorator)
        common = dict(function=statement, depends=signature.used, problems=signature.problems)
        if objects == [getattr(triton, "constexpr_function", None)] and objects[0] is not None:
            self._bind(Binding("constexpr_function", statement.name, self, statement, order, **common))
            return
        if triton.jit not in objects and all(obj in (triton.autotune, triton.heuristics) for obj in objects):
            self._bind(Binding("function", statement.name, self, statement, order, **common))
            return  # @triton.autotune without @triton.jit: a plain function to Triton
        if triton.jit not in objects or any(obj not in (triton.jit, triton.autotune, triton.heuristics)
                                            for obj in objects):
            names = ", ".join(f"@{_first_line(d)}" for d in statement.decorator_list)
            self._host(statement.name, statement, order, f"a function decorated with {names}, not @triton.jit")
            return
        if any(obj is triton.heuristics and call is None for obj, call in resolved):
            self._host(statement.name, statement, order, "decorated with @triton.heuristics without its dict of "
                                                         "values: @triton.heuristics({'NAME': lambda args: ...})")
            return
        jit = {"call": None, "heuristics": [], "configs": None, "decorators": list(statement.decorator_list),
               "configs_depends": [], "config_problems": []}
        for obj, call in resolved:
            if obj is triton.jit and call is not None:
                jit["call"] = call
                for keyword in call.keywords:
                    if keyword.arg in JIT_OPTIONS:
                        signature.expression(keyword.value)
            elif obj is triton.heuristics:
                jit["heuristics"].append(call)
            elif obj is triton.autotune and call is not None:
                configs = next((k.value for k in call.keywords if k.arg == "configs"),
                               call.args[0] if call.args else None)
                # {"early_config_prune": ...}: which configurations the autotuner launches for a launch's arguments
                prune = next((k.value for k in call.keywords if k.arg == "prune_configs_by"), None)
                checker = Checker(self, host=True)  # evaluated when the def runs, by the GPU stage only
                checker.expression(configs)
                pruning = Checker(self, host=True)  # apart: a pruner the grader cannot run leaves the configurations
                if prune is not None:
                    pruning.expression(prune)
                jit.update(configs=configs, prune=prune, prune_depends=pruning.used,
                           prune_problems=[f"{p.code}: {p.message}" for p in pruning.problems],
                           configs_depends=checker.used,
                           config_problems=[f"{p.code}: {p.message}" for p in checker.problems])
        self._bind(Binding("jit", statement.name, self, statement, order, jit=jit, **common))


def _run_magic_of_sibling(statement, siblings):
    """The module `%run helpers.py` runs, where helpers.py is a file of the submission, or None."""
    module = run_magic_module(statement.value) if isinstance(statement, ast.Expr) else None
    return module if module in siblings else None


def _only_imports(statements):
    return bool(statements) and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in statements)


def _assigned_names(statement):
    """The names an assignment binds: `N = 4`, `A, B = 1, 2`, `X: tl.constexpr = 3` (one target only)."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    if isinstance(statement, ast.AnnAssign) and statement.value is None:
        return []
    if len(targets) != 1:
        return []
    target = targets[0]
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return []


def _bound_names(statement):
    """Every module-level name a statement the grader does not run may bind."""
    names = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names += node.names
    if isinstance(statement, (ast.AsyncFunctionDef, ast.ClassDef)):
        names.append(statement.name)
    return names


def _first_line(node, limit=60):
    try:
        text = ast.unparse(node).split("\n")[0]
    except (RecursionError, ValueError):
        return type(node).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


# --- the closure of a kernel, checked ----------------------------------------------------------------------------

@dataclass
class Closure:
    """What a kernel needs, checked: the bindings to rebuild, and the problems found."""
    bindings: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # (Source, Problem)
    heuristics: list = field(default_factory=list)  # the parameters the kernel's heuristics compute
    configs: ast.expr = None  # the kernel's GPU configurations (@triton.autotune or GPU_CONFIGS), evaluated apart
    configs_module: "ModuleDefinitions" = None
    prune: ast.expr = None  # @triton.autotune's prune_configs_by, evaluated beside the configurations
    prune_problems: list = field(default_factory=list)  # why the grader does not run it
    config_problems: list = field(default_factory=list)  # why the configurations cannot be read (GPU stage only)


def closure(binding):
    """Check `binding` (a jit function) and everything it needs; returns a Closure. What only the GPU stage's
    configurations need is checked apart: a problem there never fails the kernel on the CPU."""
    result = Closure()
    kernel = binding.resolved()
    _walk([binding], kernel, result)
    tuning = kernel.module.get(TUNING_NAME)
    if kernel.jit.get("configs") is not None:
        expression, start, problems = kernel.jit["configs"], kernel.jit["configs_depends"], kernel.jit["config_problems"]
    elif tuning is not None and tuning.kind == "tuning":
        expression, start, problems = tuning.statement.value, tuning.depends, []
    else:
        result.config_problems = [tuning.reason] if tuning is not None else []
        return result
    configs = Closure()
    _walk(start, kernel, configs)
    problems = problems + [f"{p.code}: {p.message}" for _, p in configs.problems]
    if problems:
        result.config_problems = problems
    else:
        result.configs, result.configs_module = expression, (kernel.module if expression is not tuning_value(tuning)
                                                             else tuning.module)
        if expression is kernel.jit.get("configs") and kernel.jit.get("prune") is not None:
            pruning = Closure()  # apart: a pruner the grader cannot run leaves the configurations as they are
            _walk(kernel.jit["prune_depends"], kernel, pruning)
            result.problems += [(source, p) for source, p in pruning.problems if p.whole_kernel]
            problems = kernel.jit["prune_problems"] + [f"{p.code}: {p.message}" for _, p in pruning.problems]
            if problems:
                result.prune_problems = problems
            else:
                result.prune = kernel.jit["prune"]
                known = {id(b) for b in result.bindings}
                result.bindings += [b for b in pruning.bindings if id(b) not in known]
        known = {id(b) for b in result.bindings}
        result.bindings += [b for b in configs.bindings if id(b) not in known]
    return result


def tuning_value(tuning):
    return tuning.statement.value if tuning is not None and tuning.kind == "tuning" else None


def _walk(stack, kernel, result):
    """Add to `result` every binding reachable from `stack`, checking each on the way."""
    seen = {id(b) for b in result.bindings}
    stack = list(stack)
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        result.bindings.append(current)
        stack += _dependencies(current, result, kernel)


def _dependencies(binding, result, kernel):
    """The bindings `binding` needs, checking it on the way (problems go into `result`)."""
    if binding.kind == "host":
        return []
    if binding.target is not None:
        return list(binding.depends) + [binding.target]
    result.problems += [(binding.source, p) for p in binding.problems]
    if binding.kind in ("constant", "tuning", "known", "sibling"):
        return list(binding.depends)
    checker = Checker(binding.module, host=binding.kind != "jit")
    if binding.jitted:  # reached as host code (a kernel may not call a plain def): its body is a kernel's too
        result.problems.append((binding.source, Problem(binding.function.lineno, "", (
            f"`{binding.name}` is made a kernel by triton.jit({binding.name}) and run as host code too (a pruner, a "
            "heuristic or what one calls): the grader checks a def as one or the other; give each its own def"),
            host=True, whole_kernel=True)))
        return list(binding.depends)
    checker.body(binding.function)
    if binding.kind == "jit":
        for call in binding.jit["heuristics"]:
            checker.used += _check_heuristics(call, binding.module, binding, result, binding is kernel)
        wrapped = binding.jit.get("wrapped")
        while wrapped is not None:  # add_kernel = triton.jit(add): the body of `def add` is checked just now, as the
            if all(b is not wrapped for b in result.bindings):  # kernel it is, never as host code
                result.bindings.append(wrapped)
                result.problems += [(wrapped.source, p) for p in wrapped.problems]
            checker.used += [d for d in wrapped.depends if d is not wrapped.target]
            wrapped = wrapped.target
    result.problems += [(binding.source, p) for p in checker.problems]
    return list(binding.depends) + checker.used


def _check_heuristics(call, module, binding, result, of_kernel):
    """Check @triton.heuristics({"NAME": lambda args: ...}); returns the bindings its values read."""
    values = next((k.value for k in call.keywords if k.arg == "values"), call.args[0] if call.args else None)
    if len(call.args) + len(call.keywords) != 1 or not isinstance(values, ast.Dict) or \
            not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in values.keys):
        result.problems.append((binding.source, Problem(call.lineno, "@triton.heuristics(...)", (
            "@triton.heuristics takes a dict written out in full: {\"NAME\": lambda args: ...}"))))
        return []
    used = []
    for key, value in zip(values.keys, values.values):
        checker = Checker(module, host=True)
        checker.heuristic(value)
        result.problems += [(binding.source, p) for p in checker.problems]
        used += checker.used
        if of_kernel:
            result.heuristics.append(key.value)
    return used


# --- rebuilding ---------------------------------------------------------------------------------------------------

def rebuild(bindings, main):
    """{module name: (source text, [origin per line])} for the bindings, `main` (a ModuleDefinitions) first,
    under the name MAIN; raises RecursionError for trees too deep to print, ValueError for a string that would
    span lines."""
    by_module = {}
    for binding in bindings:
        if binding.kind == "host" or binding.statement is None:
            continue
        by_module.setdefault(binding.module, []).append(binding)
    modules = {}
    for module, members in by_module.items():
        name = MAIN if module is main else module.file.module_name
        lines, origins = [], []
        emitted = set()
        for binding in sorted(members, key=lambda b: b.order):
            statement = _statement_for(binding)
            key = (binding.order, ast.dump(statement))
            if key in emitted:
                continue
            emitted.add(key)
            text = ast.unparse(statement)
            lines += text.split("\n")
            origins += _origins(statement, text, binding.source)
        modules[name] = ("\n".join(lines) + "\n", origins)
        _one_line_strings(name, modules[name][0])
    return {MAIN: modules.pop(MAIN, ("", [])), **modules}


def _statement_for(binding):
    statement = binding.statement
    if isinstance(statement, ast.AnnAssign):
        # A module's annotation is evaluated when the module runs and means nothing to Triton: only the checked
        # value is kept (`X: tl.constexpr = 3` is `X = 3` to a kernel).
        return ast.copy_location(ast.Assign(targets=[statement.target], value=statement.value), statement)
    if isinstance(statement, ast.FunctionDef):
        statement = _without_annotations_triton_ignores(_without_docstrings(statement), binding.module)
        if binding.kind in ("function", "constexpr_function") and not binding.jitted:
            statement = _augmented_assignments_checked(statement, binding.module)
    if binding.kind != "jit" or binding.statement is not binding.function:
        return statement
    function = statement
    decorators = []
    for decorator in binding.jit["decorators"]:
        obj, call = resolve_decorator(decorator, binding.module)
        if obj is triton.heuristics:
            decorators.append(decorator)
        elif obj is triton.jit:
            if call is None:
                decorators.append(decorator)
            else:
                kept = [k for k in call.keywords if k.arg in JIT_OPTIONS]
                decorators.append(ast.copy_location(ast.Call(func=call.func, args=[], keywords=kept), call))
    # @triton.autotune is the GPU stage's business: its configurations travel apart, read in the sandbox.
    function.decorator_list = decorators
    return _with_defaults(function, binding.jit.get("tuned_defaults") or {})


def config_constants(configs, module=None):
    """[{name: value}] of each tuning configuration's constants (numbers, booleans and strings written out, or
    module constants bound once to one), in order, read without running anything, where the configurations are
    written out: a list of triton.Config calls with a dict of constants, or a comprehension of one over lists, tuples or ranges written out, or module
    constants, with filters of arithmetic (Triton's persistent matmul tutorial), in the decorator, bound once to a
    module name or returned by a function of `module` defined once (Triton's tutorials' get_autotune_config()). [] for any other form (a conditional, a function defined twice):
    which constants Triton launches the kernel with is then not the grader's to say."""
    local_names = []
    if isinstance(configs, ast.Call) and isinstance(configs.func, ast.Name) and not configs.args and \
            not configs.keywords and module is not None:
        called = module.names.get(configs.func.id)
        if called is None or called.kind != "function" or configs.func.id in module.bound_again or \
                not isinstance(called.function, ast.FunctionDef):
            return []
        body = called.function.body[1:] if has_docstring(called.function) else called.function.body
        configs = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
        arguments = called.function.args  # its parameters, not the module's names, inside it
        local_names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    elif isinstance(configs, ast.Name) and module is not None:  # CONFIGS = [triton.Config(...), ...] above
        bound = module.names.get(configs.id)
        configs = bound.statement.value if bound is not None and bound.kind == "constant" and \
            configs.id not in module.bound_again and isinstance(bound.statement, ast.Assign) else None
    if isinstance(configs, ast.ListComp):
        return _comprehension_constants(configs, module, local_names)
    if not isinstance(configs, (ast.List, ast.Tuple)) or not configs.elts:
        return []
    names = {**_module_literals(module), **{name: _UNREAD for name in local_names}}  # GROUP_M = 8 above
    given = []
    for element in configs.elts:
        values = _config_dict(element)
        if values is None:
            return []
        given.append(_constants(values, names))
    return given


CONSTANT_TYPES = (int, float, bool, str)
COMPREHENSION_CONFIGS = 4096  # the most configurations a comprehension is unrolled into


def _constants(values, loop_values):
    """{name: value} of a configuration dict literal's entries whose value is written out, or computed from the
    comprehension's loop variables, the module's constants (_module_literals) and numbers (`2 ** p`)."""
    given = {}
    for key, value in zip(values.keys, values.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        computed = _evaluated(value, loop_values)
        if type(computed) in CONSTANT_TYPES:
            given[key.value] = computed
    return given


def _comprehension_constants(comprehension, module=None, local_names=()):
    """Each configuration of `[triton.Config({...}) for a in (...) for b, c in (...) if ...]`, in the order Python
    makes them, where every loop runs over a list, a tuple or a range() written out, or a module constant bound
    once to one (GROUP_SIZES = (4, 8)), and every filter is arithmetic and comparisons of the loop variables."""
    values = _config_dict(comprehension.elt)
    if values is None or any(generator.is_async for generator in comprehension.generators):
        return []
    names = {**_module_literals(module), **{name: _UNREAD for name in local_names}}
    given, count = [], [0]

    def unroll(generators, loop_values):
        if not generators:
            given.append(_constants(values, loop_values))
            return True
        generator = generators[0]
        items = _evaluated(generator.iter, {**names, **loop_values})
        if not isinstance(items, (list, tuple, range)) or not items:
            return False
        for item in items:
            count[0] += 1
            if count[0] > COMPREHENSION_CONFIGS:
                return False
            inner = dict(loop_values)
            if not _bind(generator.target, item, inner):
                return False
            kept = [_evaluated(condition, {**names, **inner}) for condition in generator.ifs]
            if any(keep is _UNREAD for keep in kept):
                return False
            if all(kept) and not unroll(generators[1:], inner):
                return False
        return True

    if unroll(comprehension.generators, {}):
        return given
    # Which configurations a filter the grader cannot read keeps is not known: the constants written out in the
    # dict are, the same in every one.
    return [_constants(values, {})] if any(generator.ifs for generator in comprehension.generators) else []


_UNREAD = object()  # what _evaluated gives for an expression it does not read
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod, ast.Div: operator.truediv, ast.Pow: operator.pow, ast.LShift: operator.lshift,
              ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
              ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
              ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
              ast.NotIn: lambda a, b: a not in b, ast.USub: operator.neg, ast.UAdd: operator.pos,
              ast.Not: operator.not_}
SMALL = 2 ** 64  # the largest number a configuration's arithmetic may make (`2 ** p`, not `10 ** 10 ** 10`)


def _evaluated(node, names):
    """The value of a configuration's expression made of numbers, strings, lists, tuples, range() and `names`
    (the loop variables, module constants), with arithmetic on numbers, comparisons and `and`/`or`/`not`; _UNREAD
    otherwise. Nothing of the submission runs: the grader computes it, on numbers it bounds."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) in CONSTANT_TYPES else _UNREAD
    if isinstance(node, ast.Name):
        return names.get(node.id, _UNREAD)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_evaluated(element, names) for element in node.elts]
        return _UNREAD if any(item is _UNREAD for item in items) else \
            (list(items) if isinstance(node, ast.List) else tuple(items))
    operands, apply = None, None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        operands, apply = [node.left, node.right], _OPERATORS[type(node.op)]
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        operands, apply = [node.operand], _OPERATORS[type(node.op)]
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPERATORS:
        operands, apply = [node.left, node.comparators[0]], _OPERATORS[type(node.ops[0])]
    elif isinstance(node, ast.BoolOp):  # as Python: the operand that decides, the rest not looked at
        for operand in node.values:
            value = _evaluated(operand, names)
            if value is _UNREAD or (not value if isinstance(node.op, ast.And) else value):
                return value
        return value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and \
            names.get("range", range) is range and not node.keywords and 1 <= len(node.args) <= 3:
        operands, apply = node.args, range
    if operands is None:
        return _UNREAD
    values = [_evaluated(operand, names) for operand in operands]
    if any(value is _UNREAD for value in values):
        return _UNREAD
    arithmetic = apply is range or isinstance(node, (ast.BinOp, ast.UnaryOp)) and apply is not operator.not_
    if arithmetic and not all(isinstance(value, (int, float)) for value in values):
        return _UNREAD  # numbers only: a list or a string made a billion times longer is not a configuration
    if any(isinstance(value, (int, float)) and abs(value) > SMALL for value in values) or \
            apply in (operator.pow, operator.lshift) and abs(values[1]) > 64:
        return _UNREAD
    try:
        result = apply(*values)
        if isinstance(result, range) and len(result) > COMPREHENSION_CONFIGS:
            return _UNREAD
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return _UNREAD
    return result


def _module_literals(module):
    """{name: value} of the module's constants bound once, by `NAME = ...`, to a tuple or a number written out (a
    list may be changed in place); every other name the module binds is _UNREAD there (a `range` of its own)."""
    if module is None:
        return {}
    literals = {}
    for name, binding in module.names.items():
        value = _UNREAD
        statement = binding.statement
        if binding.kind == "constant" and name not in module.bound_again and isinstance(statement, ast.Assign) \
                and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            value = _evaluated(_unwrapped(statement.value, module), {})
        literals[name] = value if isinstance(value, (tuple, int, float, bool, str)) else _UNREAD
    return literals


def _unwrapped(node, module):
    """`x` of `tl.constexpr(x)`, which a kernel reads as `x`; any other expression as it is."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
            resolve_decorator(node.func, module)[0] is tl.constexpr:
        return node.args[0]
    return node


def _bind(target, item, loop_values):
    """Bind a comprehension's loop target (a name or a tuple of names) to one item; False where it does not fit."""
    if isinstance(target, ast.Name):
        loop_values[target.id] = item
        return True
    if isinstance(target, ast.Tuple) and isinstance(item, (tuple, list)) and len(target.elts) == len(item):
        return all(_bind(element, value, loop_values) for element, value in zip(target.elts, item))
    return False


def _config_dict(node):
    """The dict literal of a triton.Config call (its first argument, or kwargs=), or None."""
    if not isinstance(node, ast.Call) or (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) != "Config":
        return None
    values = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "kwargs"), None)
    return values if isinstance(values, ast.Dict) else None


def _with_defaults(function, values):
    """The function with `values` ({parameter: constant}) as the defaults of those trailing parameters (in place of
    their own: a configuration's value is what Triton's autotuner passes)."""
    if not values:
        return function
    arguments = copy.copy(function.args)
    params = arguments.posonlyargs + arguments.args
    defaults = dict(zip([a.arg for a in params[len(params) - len(arguments.defaults):]], arguments.defaults))
    first = min(i for i, a in enumerate(params) if a.arg in values)
    arguments.defaults = [ast.copy_location(ast.Constant(values[a.arg]), a) if a.arg in values else
                          defaults.get(a.arg) or ast.copy_location(ast.Constant(None), a) for a in params[first:]]
    function = copy.copy(function)
    function.args = arguments
    return function


def _augmented_assignments_checked(function, module):
    """A copy of a host function whose `name op= value` runs as `name = __augmented__(name, "Op", value, "name")`
    (rules.augmented_assignment) where `name` may hold an object the function did not make."""
    fresh = bound_to_new_values(function, module)

    class Checked(ast.NodeTransformer):
        def visit_AugAssign(self, node):
            if not isinstance(node.target, ast.Name) or node.target.id in fresh:
                return node
            name = node.target.id
            call = ast.Call(func=ast.Name(AUGMENTED_ASSIGNMENT, ast.Load()),
                            args=[ast.Name(name, ast.Load()), ast.Constant(type(node.op).__name__), node.value,
                                  ast.Constant(name)], keywords=[])
            return ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=call), node)

    return ast.fix_missing_locations(Checked().visit(copy.deepcopy(function)))


def as_written(line):
    """A line of a rebuilt module as the student wrote it: `x -= 1`, not `x = __augmented__(x, 'Sub', 1, 'x')`."""
    try:
        (statement,) = ast.parse(line).body
    except (SyntaxError, ValueError):
        return line
    call = statement.value if isinstance(statement, ast.Assign) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == AUGMENTED_ASSIGNMENT):
        return line
    target, operation, value, _ = call.args
    return ast.unparse(ast.AugAssign(target=ast.Name(target.id, ast.Store()), op=getattr(ast, operation.value)(),
                                     value=value))


def _without_docstrings(function):
    """A copy of the function without the strings its body starts with. They are not code, and ast.unparse writes
    a function's first string over several lines, which Triton's interpreter reads back from the rebuilt file: it
    took a `def` written inside a second docstring for the kernel's own and ran what followed."""
    body = function.body
    while body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
            isinstance(body[0].value.value, str):
        body = body[1:]
    function = copy.copy(function)
    function.body = body or [ast.copy_location(ast.Pass(), function.body[0])]
    return function


def _without_annotations_triton_ignores(function, module):
    """The function without its return annotation and the parameter annotations Triton ignores
    (Checker.ignored_annotation): they were not checked, and nothing of them may run."""
    checker = Checker(module, host=True)
    arguments = copy.copy(function.args)
    arguments.posonlyargs, arguments.args = (
        [argument if argument.annotation is None or not checker.ignored_annotation(argument.annotation)
         else ast.copy_location(ast.arg(arg=argument.arg, annotation=None), argument) for argument in group]
        for group in (function.args.posonlyargs, function.args.args))
    function = copy.copy(function)
    function.args, function.returns = arguments, None
    return function


def _one_line_strings(name, text):
    """Raise ValueError if a string of the rebuilt module `text` spans lines: every line of a rebuilt file must be
    a line of checked code (Triton's interpreter reads a kernel's source back from it, line by line)."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        # STRING, or from Python 3.12 on the FSTRING_MIDDLE of an f-string: any token but the line breaks
        if token.type not in (tokenize.NEWLINE, tokenize.NL) and token.start[0] != token.end[0]:
            raise ValueError(f"a string over several lines ({name}, line {token.start[0]}): write it on one line")


def _origins(statement, text, source):
    """Where each line of `text` (statement unparsed) was written: a parallel walk of the two trees."""
    count = text.count("\n") + 1
    origins = [None] * count
    try:
        reparsed = ast.parse(text)
    except SyntaxError:
        return [source.where(getattr(statement, "lineno", 0))] * count
    for old, new in zip(ast.walk(statement), ast.walk(reparsed.body[0] if reparsed.body else reparsed)):
        line, original = getattr(new, "lineno", None), getattr(old, "lineno", None)
        if line and original and 0 < line <= count and origins[line - 1] is None:
            origins[line - 1] = source.where(original)
    fallback = source.where(getattr(statement, "lineno", 0))
    return [origin or fallback for origin in origins]


def skeleton(binding):
    return is_skeleton(binding.resolved().function)


def kernel_params(binding):
    """The parameter names of a jit binding's function, in order."""
    arguments = binding.resolved().function.args
    return tuple(a.arg for a in arguments.posonlyargs + arguments.args)


def param_defaults(binding):
    arguments = binding.resolved().function.args
    params = kernel_params(binding)
    return set(params[len(params) - len(arguments.defaults):]) if arguments.defaults else set()


def typed(constants):
    """{name: (type, value)} of a launch's constants, to compare as launches: MASKED=0 is another specialisation of a
    kernel than MASKED=False, though 0 == False."""
    return {name: (type(value), value) for name, value in constants.items()}


def written_defaults(binding):
    """{parameter: its default} of the parameters whose default is written out as a number, boolean or string, or as
    arithmetic of module constants bound once to one (MASKED: tl.constexpr = MASK_ON), in tl.constexpr(...) or not."""
    arguments = binding.resolved().function.args
    params = kernel_params(binding)
    named = zip(params[len(params) - len(arguments.defaults):], arguments.defaults) if arguments.defaults else ()
    literals = _module_literals(binding.resolved().module)
    values = {name: _evaluated(_unwrapped(default, binding.resolved().module), literals) for name, default in named}
    return {name: value for name, value in values.items() if type(value) in CONSTANT_TYPES}


def constexpr_params(binding):
    """The parameters annotated tl.constexpr (resolved statically, or written as the string)."""
    function = binding.resolved().function
    names = []
    for argument in function.args.posonlyargs + function.args.args:
        annotation = argument.annotation
        if annotation is None:
            continue
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            if annotation.value.split(".")[-1] == "constexpr":
                names.append(argument.arg)
            continue
        resolved = Checker(binding.resolved().module, host=True).resolve(annotation)
        if isinstance(resolved, Known) and resolved.obj is triton.language.constexpr:
            names.append(argument.arg)
    return tuple(names)
