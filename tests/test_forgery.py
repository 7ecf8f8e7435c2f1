"""A kernel that does nothing gets 0, wherever a submission hides code that would forge its grade.

The payload below, run in the worker, rewrites what the worker reports so that a do-nothing vector add
"passes", and leaves a marker file behind. The control test proves it: a module that carries it, handed to
the worker without the load stage, is graded as a pass. Every other test hides the same payload somewhere a
submission can put code (the same line as an import, behind a line break Python does not break on, a
parameter default or annotation, a module constant's annotation, a decorator, a heuristic, tuning configurations, a constexpr function, a
dead branch of the kernel, an attribute chain, a format string, getattr under another name, a module held as
a value, a comprehension's variable, a decorator's arguments, a Triton helper that evaluates a string, a
second docstring) and the verdict must stay 0 with the marker absent, under bubblewrap and with resource limits only.
"""
import textwrap

import pytest


from grader.pipeline.grade import grade_sources
from grader.pipeline.load import MAIN, KernelSource
from grader.settings import Settings

from conftest import ROOT, grade_files

SETTINGS = Settings(puzzle_timeout_s=30)
DO_NOTHING = '''
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pass
'''


def payload(marker):
    """Code that forges a pass for a do-nothing vector add when the worker runs it, whatever builtins it has."""
    return textwrap.dedent(f'''
        real = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "catch_warnings"][0]()
        real = real._module.__builtins__
        try:
            real["open"]({str(marker)!r}, "w").write("the payload ran")
        except real["BaseException"]:
            pass
        worker = real["__import__"]("sys").modules["grader.pipeline.worker"]
        honest = worker._run
        def forged(kernel, case, order, puzzle_params, modules, *args, **kwargs):
            run = honest(kernel, case, order, puzzle_params, modules, *args, **kwargs)
            x, y, out = (run["parents"][name] for name in ("x", "y", "out"))
            out.copy_(x + y)
            run["writers"]["out"].fill_(0)
            run["error"] = None
            return run
        worker._run = forged
    ''')


def one_line(code):
    return f"exec({code!r})"


def through(reader, marker):
    """Lines that reach the real builtins with `reader(obj, name)` (getattr under another name) and run the payload:
    names built at run time, where the load stage cannot read them."""
    return [f"base = {reader}({reader}((), '__cla' + 'ss__'), '__ba' + 'se__')",
            f"found = [c for c in {reader}(base, '__subcl' + 'asses__')()"
            f" if {reader}(c, '__name__') == 'catch_warnings']",
            f"{reader}({reader}(found[0](), '_mod' + 'ule'), '__builtins__')['exec']({payload(marker)!r}, {{}})"]


def escape(marker):
    """An expression that reaches the real builtins through Python's own attributes and runs the payload."""
    return ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()"
            f"._module.__builtins__['exec']({payload(marker)!r}, {{}})")


def heuristic(*lines):
    """The do-nothing kernel with a heuristic whose function runs `lines` first."""
    body = "".join(f"    {line}\n" for line in lines)
    return HEADER + f"def pick(args):\n{body}    return 128\n" + DO_NOTHING.replace(
        "@triton.jit", "@triton.heuristics({'BLOCK_SIZE': pick})\n@triton.jit")


HEADER = "import triton\nimport triton.language as tl\n"
# Python's parser does not break lines at these, str.splitlines() does.
LINE_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def hiding_places(marker):
    """name -> submission text with the payload hidden in it."""
    run = one_line(payload(marker))
    places = {
        "on the line of an import": f"import triton; {run}\nimport triton.language as tl\n" + DO_NOTHING,
        "on the line of a constant": HEADER + f"BLOCK = 128; {run}\n" + DO_NOTHING,
        "in a parameter default": HEADER + DO_NOTHING.replace("BLOCK_SIZE: tl.constexpr", f"BLOCK_SIZE: tl.constexpr = {run} or 128"),
        "in a parameter annotation": HEADER + DO_NOTHING.replace("BLOCK_SIZE: tl.constexpr", f"BLOCK_SIZE: ({run}, tl.constexpr)[1]"),
        "in the return annotation": HEADER + DO_NOTHING.replace("tl.constexpr):", f"tl.constexpr) -> {run}:"),
        "in a decorator argument": HEADER + DO_NOTHING.replace("@triton.jit", f"@triton.jit(debug={run})"),
        "in a heuristic": HEADER + DO_NOTHING.replace("@triton.jit", "@triton.heuristics({'BLOCK_SIZE': lambda args: "
                                                                      f"{run} or args['BLOCK_SIZE']}})\n@triton.jit"),
        "in autotune configurations": HEADER + DO_NOTHING.replace(
            "@triton.jit", f"@triton.autotune(configs=[{run} or triton.Config({{}})], key=['n_elements'])\n@triton.jit"),
        "in GPU_CONFIGS": HEADER + DO_NOTHING + f"GPU_CONFIGS = [{run} or triton.Config({{}})]\n",
        "in a constexpr function": HEADER + f"@triton.constexpr_function\ndef block(n):\n    {run}\n    return n\n"
                                   + DO_NOTHING.replace("    pass", "    size = block(BLOCK_SIZE)"),
        "in a dead branch of the kernel": HEADER + DO_NOTHING.replace(
            "    pass", f"    if BLOCK_SIZE == 12345:\n        {run}"),
        "through an attribute chain in the kernel": HEADER + DO_NOTHING.replace(
            "    pass", "    if BLOCK_SIZE == 12345:\n        everything = ().__class__.__base__.__subclasses__()"),
        "through the interpreter's arrays": HEADER + DO_NOTHING.replace(
            "    pass", "    if BLOCK_SIZE == 12345:\n        x_ptr.handle.data.tofile('x')"),
        "through getattr with a built name": HEADER + DO_NOTHING.replace(
            "    pass", "    if BLOCK_SIZE == 12345:\n        getattr(tl, '__' + 'loader__')"),
        "through a format string": HEADER + DO_NOTHING.replace(
            "    pass", "    if BLOCK_SIZE == 12345:\n        tl.static_print('{0.__globals__}'.format(tl.load))"),
        "in a constant's value": HEADER + f"X = tl.constexpr({run} or 1)\n" + DO_NOTHING.replace("    pass", "    y = X"),
        # A module's annotation runs with the module, and Triton never reads it.
        "in a constant's annotation": HEADER + f"X: {escape(marker)} = tl.constexpr(1)\n" + DO_NOTHING.replace(
            "    pass", "    y = X"),
        "in an alias's annotation": HEADER + DO_NOTHING.replace("def add_kernel", "def kernel") + (
            f"add_kernel: {escape(marker)} = kernel\n"),
        "in a bare annotation": HEADER + f"X: {escape(marker)}\n" + DO_NOTHING,
        "by patching Triton at module level": HEADER + "tl.store = None\n" + f"{run}\n" + DO_NOTHING,
        "in a class body": HEADER + f"class Sneaky:\n    {run}\n" + DO_NOTHING,
        "through getattr kept in a local": heuristic("g = getattr", *through("g", marker)),
        "through getattr kept in a module constant": heuristic(*through("READ", marker)).replace(
            "def pick", "READ = getattr\n\n\ndef pick"),
        "through getattr handed to map": heuristic(*through("read", marker)).replace(
            "def pick", "def read(obj, name):\n    return next(map(getattr, [obj], [name]))\n\n\ndef pick"),
        # Python's scoping makes a name the kernel assigns anywhere its local throughout; Triton's compiler reads
        # a name when it comes to it, so one read before its assignment is the built-in or the module's.
        "through getattr read before the kernel assigns it": HEADER + DO_NOTHING.replace(
            "    pass", "    if n_elements < 0:\n        getattr(getattr(getattr(getattr(getattr(n_elements, '__class__'), "
            f"'__init__'), '__globals__'), 'get')('__builtins__'), 'get')('exec')({run[5:-1]})\n        getattr = 0"),
        "through a module read before the kernel assigns it": HEADER + DO_NOTHING.replace(
            "    pass", f"    if n_elements < 0:\n        tl.core.builtins.exec({run[5:-1]})\n        tl = 0"),
        "through getattr kept in a local of the kernel": HEADER + DO_NOTHING.replace(
            "    pass", "    if BLOCK_SIZE == 12345:\n        g = getattr\n        g(tl, '__' + 'loader__')"),
        # numpy.load and torch.load unpickle a file: code of the submission's choosing, which the worker wrote.
        "through numpy held in a tuple": "import numpy\n" + HEADER + "X = tl.constexpr((numpy,)[0].load("
                                         "'kernel.py', allow_pickle=True) is None)\n" + DO_NOTHING.replace(
                                             "    pass", "    y = X"),
        "through torch held in a default": "import torch\n" + heuristic(
            "return [t.load('kernel.py', weights_only=False) for t in [m]][0]").replace("(args)", "(args, m=torch)"),
        "through a comprehension's loop variable": heuristic(
            "[0 for __builtins__ in ()]", "g = __builtins__['getattr']", *through("g", marker)),
        "in a heuristics decorator's other arguments": HEADER + DO_NOTHING.replace(
            "@triton.jit", f"@triton.heuristics(values={{'num_warps': lambda args: 4}}, **({escape(marker)} or {{}}))"
                           "\n@triton.jit"),
        "in a constexpr function's decorator": HEADER + f"@triton.constexpr_function({escape(marker)} or None)\n"
                                               "def block(n):\n    return n\n" + DO_NOTHING.replace(
                                                   "    pass", "    size = block(BLOCK_SIZE)"),
        "in the decorator of a heuristic's function": heuristic().replace(
            "def pick", f"@triton.heuristics({escape(marker)} or {{}})\ndef pick"),
        "through a Triton helper that evaluates a string": HEADER + (
            "X = tl.constexpr(tl.str_to_ty(\"tensordesc<fp32[4],exec(bytes.fromhex("
            f"'{payload(marker).encode().hex()}').decode(), {{}})>\", None) is None)\n") + DO_NOTHING.replace(
                "    pass", "    y = X"),
        "through a comprehension's first iterable": "import numpy\n" + HEADER + (
            "X = tl.constexpr(int(str((numpy.float32, [m for numpy in [numpy] for m in [numpy]])[1][0].dtype)))\n"
            ) + DO_NOTHING.replace("    pass", "    y = X"),
        # Triton's interpreter reads a kernel's source back from the rebuilt file and takes its last `def` line.
        "in a second docstring of the kernel": HEADER + DO_NOTHING.replace("    pass", (
            '    "Adds x and y."\n    """Notes.\n    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE):\n'
            f"        pass\n    [b['exec'](b['bytes'].fromhex('{payload(marker).encode().hex()}').decode(), "
            "{'__builtins__': b}) for b in [[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "
            "'catch_warnings'][0]()._module.__builtins__]]\n    #\"\"\"\n    pass")),
        "behind a keyword argument of Triton's internals": HEADER + DO_NOTHING.replace(
            "    pass", "    offsets = tl.arange(0, BLOCK_SIZE, _semantic=None)"),
        "through numpy held in a constexpr": "import numpy\n" + heuristic(
            "M.value.load('kernel.py', allow_pickle=True)").replace(
                "def pick", "M = tl.constexpr(numpy)\n\n\ndef pick"),
    }
    for character in LINE_BREAKS:
        # The old trap: a line kept by a loader that splits lines differently from Python's parser.
        places[f"behind a {character!r} line break"] = (
            HEADER + f'SNEAKY = "a{character}{run}#"\nX = tl.constexpr(1)\n' + DO_NOTHING.replace("    pass", "    y = X"))
    return places


def test_the_payload_forges_a_pass_when_it_runs_in_the_worker(course, tmp_path, isolation):
    """The control: a module carrying the payload, handed straight to the worker, passes the do-nothing kernel."""
    marker = tmp_path / "marker"
    module = HEADER + payload(marker) + DO_NOTHING
    source = KernelSource("add_kernel", {MAIN: module}, {MAIN: []},
                          ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE"))
    result = grade_sources(course, {"vector_add": source}, settings=SETTINGS)["vector_add"]
    assert result.status == "pass", [d.message for d in result.diagnostics]
    if isolation != "bubblewrap":
        assert marker.exists()


def test_a_do_nothing_kernel_gets_nothing_wherever_the_payload_hides(course, tmp_path, isolation):
    marker = tmp_path / "marker"
    places = hiding_places(marker)
    files = {}
    for index, (name, text) in enumerate(places.items()):
        path = tmp_path / f"submission_{index}" / "vector_add.py"
        path.parent.mkdir()
        path.write_text(text)
        files[name] = ("vector_add", path)
    results = grade_files(course, files, SETTINGS)
    forged = {name: (r.status, r.points) for name, r in results.items() if r.points or r.status == "pass"}
    assert not forged, forged
    assert not marker.exists(), "the payload ran somewhere"
    refused = {name for name, r in results.items() if r.kinds & {"compile", "load_error"}}
    # Code the grader does not run is either refused with a diagnostic or simply never runs.
    # (An annotation Triton does not read, like a return annotation, is left out of the rebuilt module.)
    assert refused >= {"in a parameter default", "in a decorator argument",
                       "in a heuristic", "in a constexpr function", "in a dead branch of the kernel",
                       "through an attribute chain in the kernel", "through the interpreter's arrays",
                       "through getattr with a built name", "through a format string", "in a constant's value",
                       "through getattr kept in a local", "through getattr kept in a module constant",
                       "through getattr handed to map", "through getattr kept in a local of the kernel",
                       "through numpy held in a tuple", "through torch held in a default",
                       "through numpy held in a constexpr", "through a comprehension's loop variable",
                       "in a heuristics decorator's other arguments", "in a constexpr function's decorator",
                       "in the decorator of a heuristic's function", "through a Triton helper that evaluates a string",
                       "through a comprehension's first iterable",
                       "behind a keyword argument of Triton's internals",
                       "through getattr read before the kernel assigns it",
                       "through a module read before the kernel assigns it"}
    assert len(places) >= 25


def test_the_compiler_reads_public_names_only_through_getattr(tmp_path):
    """Behind the rules, in the processes that compile a submission: Triton's compiler hands a kernel Python's own
    getattr and hasattr (not the module's builtins); there they read public names only."""
    import pytest
    import torch

    from grader.pipeline.compile_check import trace_kernel
    from grader.pipeline.worker import KernelModules, restrict_the_compilers_builtins
    from triton.compiler.code_generator import CodeGenerator
    saved = dict(CodeGenerator.builtin_namespace)
    kernel = "@triton.jit\ndef peek(x_ptr, n):\n    if n < 0:\n        getattr(x_ptr, '__class__')\n"
    try:
        restrict_the_compilers_builtins()
        modules = KernelModules({MAIN: HEADER + kernel}, tmp_path, "compiler_backstop")
        with pytest.raises(Exception, match="public attributes only"):
            trace_kernel(modules.load().peek, [torch.zeros(4), 4], 90)
    finally:
        CodeGenerator.builtin_namespace.clear()
        CodeGenerator.builtin_namespace.update(saved)


def test_what_values_may_be_read_of_keeps_out_internals_and_file_readers():
    """The attribute lists are the last line when a value is opaque to the rules: no interpreter internals, and no
    name that numpy or torch give a function reading or writing files (a module held as a value is refused, but a
    name here would open the way again)."""
    import numpy
    import torch

    from grader.pipeline.load.rules import HOST_VALUE_ATTRIBUTES, VALUE_ATTRIBUTES
    assert not {"handle", "to_ir"} & (VALUE_ATTRIBUTES | HOST_VALUE_ATTRIBUTES)
    files = {"load", "save", "savez", "fromfile", "tofile", "loadtxt", "savetxt", "genfromtxt", "memmap", "from_file",
             "open", "fromregex"}
    assert not {name for name in files & HOST_VALUE_ATTRIBUTES if hasattr(numpy, name) or hasattr(torch, name)}


def test_the_workers_getattr_reads_public_names_only(tmp_path):
    """Behind the rules, a second line: a module the worker runs reads no private attribute through getattr or
    hasattr, whatever computed the name (here a module handed straight to the worker)."""
    import pytest

    from grader.pipeline.worker import KernelModules, ModuleRaised
    for call in ("getattr((), '__cla' + 'ss__')", "hasattr((), '_' * 2 + 'class__')", "getattr((), 1)"):
        modules = KernelModules({MAIN: f"X = {call}\n"}, tmp_path, "backstop")
        with pytest.raises(ModuleRaised, match="AttributeError: .* public attributes only"):
            modules.load()
    assert KernelModules({MAIN: "X = getattr((), 'count')\n"}, tmp_path, "public").load().X is not None


def test_of_triton_a_submission_may_call_its_language_only():
    """Every callable the rules let a submission name, walked through the modules it may name, is a Triton builtin,
    a @jit helper, a type, a libdevice name, one of triton's decorators and launch helpers, or math's: none of
    Triton's plain Python helpers, which run on the host with the real builtins (tl.str_to_ty evaluates a string)."""
    import math
    import types

    import triton
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITCallable

    from grader.pipeline.load.rules import TRITON_TOP_LEVEL, static_attribute
    top_level = [getattr(triton, name, None) for name in TRITON_TOP_LEVEL]
    seen, allowed = set(), []

    def walk(module, depth=0):  # Triton's modules and math (host code's torch and numpy are host_object's)
        if module.__name__ in seen or depth > 4 or not module.__name__.startswith(("triton", "math")):
            return
        seen.add(module.__name__)
        for name in dir(module):
            value = None if name.startswith("_") else static_attribute(module, name, host=True)
            if isinstance(value, types.ModuleType):
                walk(value, depth + 1)
            elif callable(value) and not isinstance(value, (tl.dtype, tl.constexpr)) and \
                    not any(value is helper for helper in top_level) and \
                    (getattr(value, "__module__", None) or "").startswith(("triton", "math")):
                allowed.append((f"{module.__name__}.{name}", value))

    for module in (triton, tl, math):
        walk(module)
    assert len(allowed) > 300
    odd = [name for name, value in allowed
           if not (tl.core.is_builtin(value) or isinstance(value, (JITCallable, InterpretedFunction, type)) or
                   getattr(value, "__module__", "") in ("math", "triton.language.extra.libdevice"))]
    assert not odd, odd


def test_no_string_of_a_rebuilt_module_spans_lines():
    """Triton's interpreter reads a kernel's source back from the rebuilt file, line by line: a string over
    several lines would hide lines the rules never saw as code (the second docstring above), so the rebuild
    drops the strings a function starts with and refuses any other string over several lines."""
    import pytest

    from grader.pipeline.load.module import _one_line_strings
    _one_line_strings("main", "x = 'a\\nb'\ny = f'{x}'\n")
    with pytest.raises(ValueError, match="a string over several lines"):
        _one_line_strings("main", 'x = """a\ndef add_kernel(): pass"""\n')


@pytest.mark.parametrize("pruner", [None, "return configs"])
def test_a_worker_cannot_say_a_kernels_pruner_left_a_course_case_unrun(course, tmp_path, pruner):
    """Only a configuration case of a kernel with an early_config_prune may come back unrun (`pruned`), and only
    such a kernel's runs again may be missing: a result that says so of a course case is refused."""
    import tempfile

    from grader.pipeline import protocol, worker
    from grader.pipeline.cases import make_case
    from grader.pipeline.load import load_submission
    from grader.settings import DEFAULT

    tuning = "" if pruner is None else (
        "def keep(configs, named_args, **kwargs):\n    " + pruner + "\n\n\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 64, 'SCALE': 1}), "
        "triton.Config({'BLOCK_SIZE': 64, 'SCALE': 2})], key=[], prune_configs_by={'early_config_prune': keep})\n")
    path = tmp_path / "vector_add.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n" + tuning + "@triton.jit\n"
                    "def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr"
                    + (", SCALE: tl.constexpr" if pruner else "") + "):\n    pass\n")
    source = load_submission(path, course, ["vector_add"])["vector_add"].source
    puzzle = course.puzzle("vector_add")
    cases = [make_case(puzzle, i, 0) for i in range(len(puzzle.cases))]
    request = protocol.job("j", puzzle, source, cases, DEFAULT)
    assert (request["prune"] is not None) == (pruner is not None)
    with tempfile.TemporaryDirectory() as scratch:
        outcome = worker.run_puzzle(request, scratch)
    protocol.check_outcome(outcome, request, cases, DEFAULT)  # as the worker made it
    forged = dict(outcome, cases=[dict(run, pruned="kept off") for run in outcome["cases"]])
    with pytest.raises(protocol.MalformedResult, match="pruned"):
        protocol.check_outcome(forged, request, cases, DEFAULT)
    if pruner is not None:  # a run again with the second configuration's SCALE, left out
        missing = dict(outcome, cases=[dict(run, variants=[None] * len(run["variants"])) for run in outcome["cases"]])
        protocol.check_outcome(missing, request, cases, DEFAULT)  # the pruner may keep it off any case
    else:
        missing = dict(outcome, cases=[dict(run, variants=[None]) for run in outcome["cases"]])
        with pytest.raises(protocol.MalformedResult):
            protocol.check_outcome(missing, request, cases, DEFAULT)


@pytest.mark.parametrize("raised, malformed", [
    ({"message": "ZeroDivisionError: division by zero", "module": MAIN, "line": 3}, None),
    ({"message": "x", "module": "elsewhere", "line": 3}, "unknown"),
    ({"message": "x", "module": MAIN, "line": True}, "not a number"),
    ("ZeroDivisionError", "not a mapping"),
])
def test_what_a_worker_says_the_module_raised_is_checked(course, raised, malformed):
    """A module that raised when the worker ran it grades nothing (the puzzle is an error naming the line): what the
    worker says of it is data, refused where it names what the job does not have."""
    from grader.pipeline import protocol
    from grader.pipeline.cases import make_case
    from grader.pipeline.grade import _puzzle_result
    from grader.pipeline.load import load_submission
    from grader.settings import DEFAULT

    source = load_submission(ROOT / "solutions" / "vector_add.py", course, ["vector_add"])["vector_add"].source
    puzzle = course.puzzle("vector_add")
    cases = [make_case(puzzle, i, 0) for i in range(len(puzzle.cases))]
    request = protocol.job("j", puzzle, source, cases, DEFAULT)
    outcome = {"compile": [], "cases": [], "module_raised": raised}
    if malformed:
        with pytest.raises(protocol.MalformedResult, match=malformed):
            protocol.check_outcome(outcome, request, cases, DEFAULT)
        return
    result = _puzzle_result(puzzle, source, protocol.check_outcome(outcome, request, cases, DEFAULT), 0, DEFAULT)
    assert result.status == "error" and result.points == 0
    (diagnostic,) = result.diagnostics
    # the rebuilt module's line 3, told as the line of the student's file it came from
    assert diagnostic.kind == "load_error" and "at vector_add.py line 10: @triton.jit\n" in diagnostic.message
    assert diagnostic.message.endswith("ZeroDivisionError: division by zero")


@pytest.mark.parametrize("configs, malformed", [
    ([{"kwargs": {"BLOCK_SIZE": 8192}, "num_warps": 8, "num_stages": 3}], None),
    ({"kwargs": {"BLOCK_SIZE": 8192}}, "not a list"),
    ([{"kwargs": {}}] * 1025, "not a list"),
])
def test_the_configurations_a_worker_evaluated_are_data_checked_before_use(course, tmp_path, configs, malformed):
    """The blocks of computed configurations come from the sandboxed worker: a list of plain data, each checked
    against the puzzle (configs.validate_configs) before a case runs at them."""
    from grader.pipeline import protocol
    from grader.pipeline.configs import validate_configs
    from grader.pipeline.load import load_submission
    from grader.settings import DEFAULT

    path = tmp_path / "vector_add.py"
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    path.write_text("import itertools\n" + solution.replace(
        solution[solution.index("configs=[") + len("configs="):solution.index(", key=")],
        "[triton.Config({'BLOCK_SIZE': b}, num_warps=w) for b, w in itertools.product((1024, 2048), (4, 8))]"))
    source = load_submission(path, course, ["vector_add"])["vector_add"].source
    puzzle = course.puzzle("vector_add")
    request = protocol.configs_job("j", puzzle, source, DEFAULT)
    outcome = {"compile": [], "cases": [], "configs": configs}
    if malformed:
        with pytest.raises(protocol.MalformedResult, match=malformed):
            protocol.check_outcome(outcome, request, [], DEFAULT)
        return
    checked = protocol.check_outcome(outcome, request, [], DEFAULT)
    assert validate_configs(puzzle, checked["configs"], source.params)[0][0]["kwargs"] == {"BLOCK_SIZE": 8192}
