"""The sandboxed side of grading: compile, then interpret, a submission's kernels on the cases it is given.

The grader's process makes the cases and keeps the reference; it sends this worker only the kernel's modules
(rebuilt from the submission's syntax tree by the load stage), the input tensors and the launch plans, and
gets back the memory the kernels left behind, which it checks (protocol.py) and compares itself.
`python -m grader.pipeline.worker REQUEST RESULTS` reads REQUEST (torch.save'd), and writes one file per
puzzle into RESULTS as soon as that puzzle is done, so that a worker that dies or hangs on one puzzle has
still delivered the ones before it.

The modules run with a short list of builtins and can import only triton, math and each other. A kernel must
compile for the GPU before it is interpreted.
"""
import ast
import builtins
import collections
import collections.abc
import contextlib
import gc
import sys
import traceback
import types
import warnings
from pathlib import Path

import torch
from triton.runtime.autotuner import Heuristics

from .cases import Buffer
from .compile_check import (benchmark_compile, compile_kernel, compile_problems, key_the_compile_cache_by_version,
                            lower_kernel, trace_kernel)
from .configs import (case_runs, kept_configurations, kept_indices, kernel_pruner, launched_constants, on_the_gpu,
                      read_configs)
from .traffic import Plan, ProfileError, profile
from ..course import TensorSpec
from .interpret import KernelCrashed, bind_arguments, interpreting, launch, python_function, with_constants
from .load.module import MAIN, typed
from .load.rules import AUGMENTED_ASSIGNMENT, HOST_BUILTINS, HOST_MODULES, HostCodeStopped, augmented_assignment
from .memcheck import MemoryChecker, OutOfBounds, Region, passes_taken_back


def _public_getattr(obj, name, *default):
    """getattr as the load stage lets a submission call it, of a public name: a second line behind the rules,
    which accept only a name written out, should one of them ever let another through."""
    if not isinstance(name, str) or name.startswith("_"):
        raise AttributeError(f"{name!r}: a submission reads public attributes only")
    return getattr(obj, name, *default)


def _public_hasattr(obj, name):
    if not isinstance(name, str) or name.startswith("_"):
        raise AttributeError(f"{name!r}: a submission reads public attributes only")
    return hasattr(obj, name)


def restrict_the_compilers_builtins():
    """Triton's compiler gives a kernel Python's own getattr and hasattr, whatever builtins its module runs with:
    for the processes that compile a submission, the public-only ones, a second line behind the load stage's
    rules (which a name read before its assignment once slipped past)."""
    from triton.compiler.code_generator import CodeGenerator
    CodeGenerator.builtin_namespace.update(getattr=_public_getattr, hasattr=_public_hasattr)


def _held_state(modules):
    """(module name, the top-level name, what holds state) where something the modules bind holds an iterator
    (`iter(...)`, `map(...)`, a generator; in any container, a configuration, a constexpr or a function's
    defaults), or a function has a list, dict or set as a default; or None. Host code run at each launch (a
    heuristic, an early_config_prune, a helper they call) that consumed or changed it would answer one way for the
    check's launches and another for later ones; the load stage's rules refuse every other state kept from one
    call to the next (assignments to elements and attributes, growing a list or `+=` on a name the call did not
    make)."""
    # Breadth first: what holds it is told by the top-level name nearest to it.
    pending = collections.deque((module_name, name, name, value) for module_name, module in modules.loaded.items()
                                for name, value in vars(module).items() if not name.startswith("__"))
    seen = set()
    while pending and len(seen) < 100_000:
        module_name, name, what, value = pending.popleft()
        if id(value) in seen or isinstance(value, (types.ModuleType, type, types.CodeType, str, bytes)):
            continue
        seen.add(id(value))
        if isinstance(value, collections.abc.Iterator):
            top = value is getattr(modules.loaded[module_name], name, None)
            return module_name, name, f"{what} {'is' if top else 'holds'} an iterator"
        if isinstance(value, types.FunctionType):
            for default in [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]:
                if type(default) in (list, dict, set):
                    return module_name, name, f"a default of {name} is a {type(default).__name__}"
                pending.append((module_name, name, f"a default of {name}", default))
            continue
        pending.extend((module_name, name, what, referent) for referent in gc.get_referents(value))
    return None


class ModuleRaised(Exception):
    """A kernel's module raised when it ran: (message, the module's name, its line or None)."""


class KernelModules:
    """A job's rebuilt modules, executed on demand with restricted builtins and imports."""

    def __init__(self, modules, directory, prefix, kernel=None, unseen_by_heuristics=()):
        self.sources = modules
        self.kernel, self.unseen = kernel, frozenset(unseen_by_heuristics)
        self.directory = Path(directory)
        self.prefix = prefix
        self.paths = {}
        self.loaded = {}  # module name -> the module of the latest load()
        for index, (name, text) in enumerate(modules.items()):
            # Triton reads a kernel's source from its file: each module gets a real one.
            path = self.directory / f"{prefix}_{index}.py"
            path.write_text(text)
            self.paths[name] = path

    def load(self, suffix=""):
        """A fresh execution of the modules; returns the main one. Sibling modules are executed when imported."""
        loaded = {}

        def restricted_import(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0 and name.split(".")[0] in ("triton", "math") + HOST_MODULES:
                return builtins.__import__(name, globals, locals, fromlist, level)
            if level == 0 and name in self.sources and name != MAIN:
                if name not in loaded:
                    loaded[name] = execute(name)
                return loaded[name]
            raise ImportError(f"{name} cannot be imported by a kernel's module")

        safe = {name: getattr(builtins, name) for name in HOST_BUILTINS if hasattr(builtins, name)}
        safe.update(__import__=restricted_import, getattr=_public_getattr, hasattr=_public_hasattr,
                    **{AUGMENTED_ASSIGNMENT: augmented_assignment})

        def execute(name):
            module_name = f"{self.prefix}{suffix}" if name == MAIN else name
            module = types.ModuleType(module_name)
            module.__file__ = str(self.paths[name])
            module.__dict__["__builtins__"] = safe
            sys.modules[module_name] = module  # Triton looks kernels' modules up by name
            code = compile(self.sources[name], str(self.paths[name]), "exec")
            try:
                exec(code, module.__dict__)
            except ModuleRaised:  # by a sibling module it imports: that one's line
                raise
            except Exception as error:
                raise ModuleRaised(f"{type(error).__name__}: {error}"[:500], name,
                                   self.line_raised(error, name)) from None
            return module

        main = execute(MAIN)
        self.loaded = {MAIN: main, **loaded}
        layer = getattr(main, self.kernel, None) if self.unseen else None
        while isinstance(layer, Heuristics):  # above @triton.autotune, which the rebuilt kernel goes without
            layer.unseen = self.unseen
            layer = layer.fn
        return main

    def line_raised(self, error, name=None):
        """The line of the modules' (or of module `name`'s) code nearest to where `error` was raised, as (module
        name, line), or its line alone with `name`; None where none of their code was running."""
        frames = [(self.module_of(frame.filename), frame.lineno)
                  for frame in traceback.extract_tb(error.__traceback__) if self.module_of(frame.filename) is not None]
        if name is not None:
            return next((line for module, line in reversed(frames) if module == name), None)
        return frames[-1] if frames else (None, None)

    @property
    def files(self):
        return {str(path) for path in self.paths.values()}

    @property
    def file_modules(self):
        """{file: the name of the module it holds}."""
        return {str(path): name for name, path in self.paths.items()}

    def module_of(self, filename):
        """The name of the module whose file this is (for a line reported by Triton), or None."""
        return next((name for name, path in self.paths.items() if str(path) == str(filename)), None)


def _binding_line(text, name):
    """The line of the module's first top-level statement that binds `name`, or None."""
    for statement in ast.parse(text).body:
        if isinstance(statement, ast.FunctionDef) and statement.name == name or \
                any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
                    for node in ast.walk(statement)):
            return statement.lineno
    return None


def module_stopped(modules, job):
    """None when the job's modules ran and hold no state its host code could keep from one launch to the next;
    else why not, as data: {"message", "module", "line" (or None)}. Both sandboxes that run a submission's modules
    (this worker and the GPU stage's compile sandbox) ask it first."""
    try:
        modules.load()
    except ModuleRaised as raised:
        message, module, line = raised.args
        return {"message": message, "module": module, "line": line}
    held = _held_state(modules) if job.get("host_code_at_launch") else None
    if held is None:
        return None
    module, name, what = held
    return {"message": (
        f"{what}, made when the module runs: host code run at each launch or compile (a heuristic, a pruner, a "
        "@triton.constexpr_function) could consume or change it and answer one way for the check's launches and "
        "another for later ones. Bind a tuple of the values instead (tuple(...)), or make it inside the function "
        "that uses it"),
        "module": module, "line": _binding_line(job["modules"][module], name)}


def host_code_stopped(error, modules, ran="its early_config_prune, run for a case's launch"):
    """What stopped the kernel's host code (its pruner, or what `ran` says), as module_stopped says it
    (rules.HostCodeStopped): an augmented assignment that would change an object in place, which on a GPU changes a
    launch's tensor or keeps state for later ones, or a pruner's configuration no case ran."""
    module, line = modules.line_raised(error)
    return {"message": f"{ran}: {error}"[:500], "module": module or MAIN, "line": line}


def run_puzzle(job, directory, course=None):
    """Compile the job's kernel; if it compiles, run every case, and with a profile asked for and every case run,
    profile it (traffic.py); a job without cases is the profile alone. Returns plain data (tensors, numbers,
    strings). The kernel's host code (its module, configurations, pruner, heuristics) is told it runs on the GPU
    the check compiles for last: the GPU stage's (configs.on_the_gpu)."""
    with on_the_gpu(max(job["targets"])):
        return _run_puzzle(job, directory, course)


def _run_puzzle(job, directory, course):
    modules = KernelModules(job["modules"], directory, f"kernel_{_safe(job['id'])}", job["kernel"],
                            job.get("unseen_by_heuristics", ()))
    stopped = module_stopped(modules, job)
    if stopped is not None:
        return {"compile": [], "cases": [], "module_raised": stopped}
    if job.get("evaluate_configs"):  # the configurations a kernel computes, and nothing else
        asked = job["evaluate_configs"]
        return {"compile": [], "cases": [], "configs": read_configs(
            asked["expression"], modules.loaded[asked["module"]].__dict__, asked["kernels"], max(job["targets"]))}
    # A tuning configuration's constants are passed to each launch, as Triton's autotuner passes them (a heuristic
    # may read them): the first configuration's, and each other's as a variant every case runs again with.
    tuned, variants = job.get("tuned", {}), job.get("variants", [])
    launches = [(index, launch["args"]) for index, case in enumerate(job["cases"]) for launch in case["launches"]]
    if (tuned or variants) and launches:  # the compiler sees each tuning configuration's constants
        kernel = getattr(modules.load("_variants"), job["kernel"])
        launches = [(index, with_constants(kernel, args, constants)) for constants in [tuned, *variants]
                    for index, args in launches]
    plan = _plan(job, modules, getattr(modules.load("_plan"), job["kernel"]), course) if job.get("profile") else None
    benchmark = (job["profile"]["target"], plan.args, plan.config) if isinstance(plan, Plan) else None
    if not launches:  # the estimate alone, for a kernel whose cases already passed (a notebook's check)
        outcome = {"compile": [], "cases": []}
        if benchmark is not None:
            finished, lanes = benchmark_compile(modules, job["kernel"], benchmark, job.get("spare_cores") is True)
            profiled = _profile(getattr(modules.load(), job["kernel"]), plan, lanes(), modules,
                                job["profile"]["seconds"])
            outcome["profile"] = {**profiled, "resources": finished()}
        elif plan is not None:
            outcome["profile"] = plan  # why the launch cannot be made
        return outcome

    def interpret(lanes=None):
        """The cases' runs, and with a callable that gives the benchmark launch's lane layouts
        (compile_check.benchmark_compile) the profile too, while the compile may still run in a fork."""
        kernel = getattr(modules.load(), job["kernel"])  # the modules interpreting() points at Triton's interpreter
        fn = python_function(kernel)
        params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        pruner = kernel_pruner(job, modules.loaded, max(job["targets"]))
        given = launched_constants(kernel, [config.kwargs for config in pruner[0]]) \
            if pruner is not None and pruner[0] is not None else []
        runs = []
        with interpreting([vars(module) for module in modules.loaded.values()]):
            for case in job["cases"]:
                try:
                    kept, pruning = kept_configurations(pruner, case, params, params[len(job["puzzle_params"]):])
                except HostCodeStopped as error:
                    return kernel, host_code_stopped(error, modules), None
                main, with_others = case_runs(kept, [tuned, *variants], given, len(case["launches"]))
                run = _run(kernel, case, case["order"], job["puzzle_params"], modules, constants=main,
                           launched=pruning.get("pruned") is None)
                run.update(pruning)
                if any(typed(constants) != typed(tuned) for constants in main):
                    run["constants"] = next(constants for constants in main if typed(constants) != typed(tuned))
                refill = {name: parents for name, parents in case.get("refill", {}).items()
                          if name in run["read_unwritten"]}
                if refill and run["error"] is None:  # the output read before it was stored: did it matter?
                    again = [_run(kernel, case, case["order"], job["puzzle_params"], modules,
                                  {name: parents[i] for name, parents in refill.items()}, constants=main)
                             for i in range(len(next(iter(refill.values()))))]
                    run["refilled"] = {name: [other["parents"][name] for other in again] for name in refill}
                    run["refill_failed"] = any(other["error"] is not None for other in again)
                # Right with NaN in masked-off lanes, and an operation ran that NaN need not spread through: with
                # 0 there too?
                if run.pop("nan_may_have_hidden") and run["error"] is None:
                    zero = _run(kernel, case, case["order"], job["puzzle_params"], modules, zero_undefined=True,
                                constants=main)
                    run["zero_filled"] = {name: zero["parents"][name] for name in case["written"]}
                    run["zero_fill_failed"] = zero["error"] is not None
                if run["error"] is None:  # right with the first tuning configuration's constants: with the others'?
                    # None where that is the case's own run (kept off every launch), or the case is not run.
                    run["variants"] = [_run(kernel, case, case["order"], job["puzzle_params"], modules,
                                            constants=constants)
                                       if "pruned" not in run and constants is not None else None
                                       for constants in with_others]
                    for again in filter(None, run["variants"]):
                        again.pop("nan_may_have_hidden")
                runs.append(run)
                (Path(directory) / f"{job['id']}.progress").write_text(str(len(runs)))  # read by the grader
        profiled = None
        if plan is not None and lanes is not None and not any(run["error"] for run in runs):
            profiled = _profile(kernel, plan, lanes(), modules, job["profile"]["seconds"])
        return kernel, runs, profiled

    if job.get("compiled") is not None:  # the compiler accepted these launches in an earlier check (check_cache.py)
        problems, resources, interpreted = [], job["compiled"]["resources"], interpret()
    else:
        problems, resources, interpreted = compile_problems(modules, job["kernel"], launches, job["targets"],
                                                            benchmark, meanwhile=interpret,
                                                            fork=job.get("spare_cores") is True)
    if problems:
        return {"compile": problems, "cases": []}
    kernel, runs, profiled = interpreted
    if isinstance(runs, dict):
        return {"compile": [], "cases": [], "module_raised": runs}
    outcome = {"compile": [], "cases": runs, "resources": resources}
    if plan is not None and not any(run["error"] for run in runs):
        if profiled is None:  # the compile that knows the lane layouts came after the cases (compile_problems)
            profiled = _profile(kernel, plan, (resources or {}).get("lanes", ()), modules, job["profile"]["seconds"])
        outcome["profile"] = {**profiled, "resources": resources}
    return outcome


def _plan(job, modules, kernel, course):
    """The profile's Plan, or {"configs", "error"} when the launch cannot be made."""
    puzzle = course.puzzle(job["profile"]["puzzle"])
    configs, chosen, kept = [], job["profile"].get("config"), None
    try:
        if job["profile"]["configs"] is not None:
            configs = read_configs(job["profile"]["configs"], modules.loaded[job["profile"]["configs_module"]].__dict__,
                                   [job["kernel"], puzzle.kernel], job["profile"]["target"])
        # A chosen configuration brings its values of the kernel's own parameters (validate_configs' "constants").
        constants = {**job.get("tuned", {}), **(chosen or {}).get("constants", {})}
        plan = Plan(kernel, puzzle, configs, chosen, constants)
        pruner = kernel_pruner(job, modules.loaded, max(job["targets"]))
        if chosen is None and pruner is not None and pruner[0] is not None and \
                len(pruner[0]) == len(configs) and not any("error" in config for config in configs):
            # The GPU stage's autotuner times, at the benchmark's size, only what the kernel's pruner keeps there.
            fn = python_function(kernel)
            with contextlib.suppress(Exception):  # a pruner that raises here prunes nothing, as for the cases
                kept = kept_indices(pruner, fn.__code__.co_varnames[:fn.__code__.co_argcount], plan.args)
            if kept is not None and kept[0] != 0:
                first = launched_constants(kernel, [pruner[0][kept[0]].kwargs])[0]
                plan = Plan(kernel, puzzle, [configs[i] for i in kept], None,
                            {name: first.get(name) for name in job.get("tuned", {})})
    except Exception as error:
        return {"configs": configs, "error": f"{type(error).__name__}: {error}"[:500]}
    plan.configs, plan.kept = configs, kept
    return plan


def _profile(kernel, plan, lanes, modules, seconds):
    """The performance stage's counters (without the compile's resources), or {"configs", "error": why there are
    none}; `lanes`: the compile's lane layouts (compile_check.lane_axes)."""
    if not isinstance(plan, Plan):
        return plan
    try:
        kept = {} if plan.kept is None else {"kept": plan.kept}  # of the configurations, at the benchmark's size
        return {"configs": plan.configs, **kept, **profile(kernel, plan, lanes, modules.file_modules, seconds,
                                                           [vars(module) for module in modules.loaded.values()])}
    except ProfileError as error:
        return {"configs": plan.configs, "error": str(error)}
    except KernelCrashed as crash:  # raised from inside the kernel: the recorder's own ProfileError, or the kernel's
        error = crash.error
        return {"configs": plan.configs, "error": str(error) if isinstance(error, ProfileError) else
                f"{type(error).__name__}: {error}"[:500]}
    except Exception as error:  # the kernel's own failure at the benchmark size: the grader says so, nothing more
        return {"configs": plan.configs, "error": f"{type(error).__name__}: {error}"[:500]}


def _safe(key):
    return "".join(c if c.isalnum() else "_" for c in key)


def _run(kernel, case, order, puzzle_params, modules, refill=None, zero_undefined=False, constants=None,
         launched=True):
    """One run of a case: fresh copies of its tensors (the parents in `refill` in place of their own), the launches
    in order, what memory looks like after; `zero_undefined`: masked-off lanes loaded without other= hold 0, as on
    a GPU, instead of NaN; `constants`: {parameter: value} of the kernel's own parameters, as a tuning configuration
    gives them (or a list of them, one per launch); not `launched`: the case's memory as it was given, no program run."""
    copies = _copy_case(case)
    for name, parent in (refill or {}).items():
        copies["buffers"][name]["parent"].copy_(parent)
    fn = python_function(kernel)
    params = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    buffers = {}
    for name, tensor in copies["buffers"].items():
        parent, views = tensor["parent"], tensor["views"]
        index = torch.arange(parent.numel())
        positions = [index.as_strided(v.shape, v.stride(), v.storage_offset()) for v in views]
        role = "inout" if name in case["written"] else "input"  # all the memory checker needs of its role
        buffers[name] = Buffer(TensorSpec(name, (), role, False), parent, views, positions)
    error, printed, undefined_loaded, passes_over_nan = None, "", False, False
    for launch_index, plan in enumerate(copies["launches"]):
        regions = {params[position]: Region(buffers[name], index, params[position], puzzle_params[position])
                   for position, (name, index) in plan["regions"].items()}
        programs = [tuple(p) for p in plan[order]] if launched else []
        try:
            arguments = bind_arguments(kernel, plan["args"], constants[launch_index] if isinstance(constants, list)
                                       else constants)
            checker = MemoryChecker(regions, launch_index, tuple(plan["grid"]), plan["dims"], zero_undefined)
            output = launch(kernel, arguments, tuple(plan["grid"]), programs, checker, modules.files)
            printed += output.printed
            undefined_loaded = undefined_loaded or checker.undefined_loaded
            passes_over_nan = passes_over_nan or checker.passes_over_nan
        except OutOfBounds as violation:
            error = {"kind": "out_of_bounds", "message": violation.message(), "tensor": violation.tensor,
                     "access": violation.access, "program": list(violation.program),
                     "offsets": [float(o) for o in violation.offsets[:4096]], "launch": launch_index}
        except KernelCrashed as crash:
            kind = "out_of_memory" if isinstance(crash.error, MemoryError) else "kernel_error"
            error = {"kind": kind, "message": f"{type(crash.error).__name__}: {crash.error}", "line": crash.line,
                     "module": modules.module_of(crash.filename), "program": list(crash.program),
                     "launch": launch_index}
        if error:
            break
    return {"order": order, "error": error, "printed": printed,
            "parents": {name: b.parent for name, b in buffers.items()},
            "writers": {name: torch.from_numpy(b.writers) for name, b in buffers.items()},
            "readers": {name: torch.from_numpy(b.readers) for name, b in buffers.items()},
            "race": {name: list(b.race) for name, b in buffers.items() if b.race is not None},
            "crossed": {name: list(b.crossed) for name, b in buffers.items() if b.crossed is not None},
            "lane_race": {name: list(b.lane_race) for name, b in buffers.items() if b.lane_race is not None},
            "read_unwritten": {name: list(b.read_unwritten) for name, b in buffers.items()
                               if b.read_unwritten is not None},
            "loads": {name: int(b.loads - passes_taken_back(b)) for name, b in buffers.items()},
            "repeated": {name: int(b.repeated) for name, b in buffers.items()},
            "nan_may_have_hidden": undefined_loaded and passes_over_nan}


def _copy_case(case):
    """Deep copy of a case's tensors that keeps the views sharing their parents' storage."""
    copies = {"buffers": {}, "launches": []}
    moved = {}
    for name, tensor in case["buffers"].items():
        parent = tensor["parent"].clone()
        moved[tensor["parent"].untyped_storage().data_ptr()] = parent
        copies["buffers"][name] = {"parent": parent, "views": [
            parent.as_strided(v.shape, v.stride(), v.storage_offset()) for v in tensor["views"]]}
    for plan in case["launches"]:
        args = [moved[a.untyped_storage().data_ptr()].as_strided(a.shape, a.stride(), a.storage_offset())
                if isinstance(a, torch.Tensor) else a for a in plan["args"]]
        copies["launches"].append({**plan, "args": args})
    return copies


def warm_up():
    """What every first compile and launch pays once (the compiler's back ends for each target, the
    interpreter's first launch is cheap), paid by the warm worker (forkserver.py) before any submission, on a kernel of the grader's."""
    import triton
    import triton.language as tl
    from ..settings import DEFAULT

    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)

    key_the_compile_cache_by_version()
    x, y = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    for target in DEFAULT.compile_targets:  # as compile_problems compiles a first launch for each
        (compile_kernel if target == max(DEFAULT.compile_targets) else lower_kernel)(copy, [x, y, 8, 4], target)
        trace_kernel(copy, [x, y, 8, 8], target)


def main(request_path, results):
    warnings.simplefilter("ignore")  # Triton's notices are noise in a student's report
    key_the_compile_cache_by_version()
    restrict_the_compilers_builtins()
    request = torch.load(request_path, weights_only=True)
    results = Path(results)
    course = None
    if "course" in request:  # the performance stage needs the puzzles' benchmarks
        from ..course import load_course
        course = load_course(request["course_path"], text=request["course"])
    for job in request["puzzles"]:
        (results / f"{job['id']}.started").touch()
        outcome = run_puzzle(job, results, course)
        torch.save(outcome, results / f"{job['id']}.partial")
        (results / f"{job['id']}.partial").rename(results / f"{job['id']}.pt")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
