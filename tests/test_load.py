"""Submissions load from .py files, notebooks and directories; each problem gets its own verdict."""
import ast
import os
import textwrap

import pytest

from grader.pipeline.grade import grade_submission
from grader.pipeline.load import MAIN, SubmissionError, load_submission
from grader.pipeline.load.files import read_file
from grader.pipeline.load.module import ModuleDefinitions
from grader.settings import DEFAULT
from grader.settings import Settings

from conftest import ROOT, write_notebook

SOLUTION = (ROOT / "solutions" / "vector_add.py").read_text()


def test_a_notebook_loads_without_running_its_check_and_experiment_cells(tmp_path, grade):
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "%matplotlib inline\nimport torch",
        SOLUTION,
        "raise RuntimeError('a check cell must not run while grading')",
        "check('vector_add', add_kernel)\nadd_kernel[(1,)](1, 2, 3)",
        "!pip install nothing",
    ])
    report = grade(notebook)
    assert [(p.id, p.status) for p in report.puzzles] == [("vector_add", "pass")]


WRONG_DRAFT = SOLUTION.replace("mask=mask)", "mask=offsets <= n_elements)")


def test_a_notebook_is_graded_as_its_check_cell_sees_it_when_run_from_the_top(tmp_path, grade):
    """What a cell after the check defines again (a draft, a helper, a constant) is not what the check cell graded
    when the notebook ran from the top, as Restart & Run All and nbgrader run it: the report says so."""
    for later in (WRONG_DRAFT, "BLOCK = tl.constexpr(3)", "import triton\n@triton.jit\ndef add_kernel(x):\n    pass"):
        notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
            "import triton\nimport triton.language as tl", SOLUTION, "check('vector_add', add_kernel);", later])
        graded = grade(notebook).puzzle("vector_add")
        assert graded.status == "pass", later
        if later != "BLOCK = tl.constexpr(3)":  # a constant the kernel does not use changes nothing it graded
            assert any("cell 3 checks" in note and "Restart & Run All" in note for note in graded.notes), graded.notes
    # nbgrader's test cell counts as the check; a kernel defined only after every check is graded as before.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "check('vector_add', add_kernel)", WRONG_DRAFT, "grade('vector_add', add_kernel)", SOLUTION])
    assert grade(notebook).puzzle("vector_add").status == "fail"
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", ["check('vector_add', add_kernel)", SOLUTION])
    assert grade(notebook).puzzle("vector_add").status == "pass"
    # A later check however it is written (an assignment, an assert, puzzle_id=, check imported under another
    # name) is the one that counts.
    for later_check in ("result = check('vector_add', add_kernel)", "assert c('vector_add', add_kernel).points",
                        "check(puzzle_id='vector_add', kernel=add_kernel)"):
        notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
            "from grader.notebook import check as c", WRONG_DRAFT, "check('vector_add', add_kernel)", SOLUTION,
            later_check])
        graded = grade(notebook).puzzle("vector_add")
        assert graded.status == "pass" and not graded.notes, (later_check, graded.notes)
    # The skeleton left above the check and the kernel written below it: the student's kernel is graded.
    skeleton = SOLUTION.split("    pid = ")[0] + "    pass\n"
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [skeleton, "check('vector_add', add_kernel)",
                                                                 SOLUTION])
    assert grade(notebook).puzzle("vector_add").status == "pass"
    # Importing again after the check redefines nothing the kernel does: no note.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        SOLUTION, "check('vector_add', add_kernel)", "import torch\nimport triton\nimport triton.language as tl"])
    graded = grade(notebook).puzzle("vector_add")
    assert graded.status == "pass" and not graded.notes, graded.notes


def test_a_kernel_a_notebook_writes_with_writefile_and_imports_is_graded_from_the_notebook_alone(tmp_path, grade):
    """`%%writefile my_add.py` then `from my_add import add_kernel`: the check cell imports the file the cell wrote,
    and the notebook graded alone (no my_add.py beside it) grades the same kernel, from the cell."""
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "%%writefile my_add.py\n" + SOLUTION, "from my_add import add_kernel", "check('vector_add', add_kernel)"])
    assert grade(notebook).puzzle("vector_add").status == "pass"
    # The notebook's own cells decide: a later cell writing the file again, or appending to it, is what runs.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "%%writefile my_add.py\n" + SOLUTION, "%%writefile my_add.py\n" + WRONG_DRAFT,
        "import my_add\nadd_kernel = my_add.add_kernel"])
    assert grade(notebook).puzzle("vector_add").status == "fail"
    header, body = SOLUTION.split("\n\n\n", 1)
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        f"%%writefile parts.py\n{header}\n\n\n", f"%%writefile -a parts.py\n{body}", "from parts import add_kernel"])
    assert grade(notebook).puzzle("vector_add").status == "pass"
    # Its lines are the cell's: an error in the file names the cell and the line the student sees.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "%%writefile my_add.py\n" + SOLUTION.replace("pid = tl", "pid = = tl"), "from my_add import add_kernel"])
    result = grade(notebook).puzzle("vector_add")
    line = SOLUTION.splitlines().index(next(l for l in SOLUTION.splitlines() if "pid = tl" in l)) + 2
    assert result.status == "error" and \
        f"01_vector_add.ipynb cell 1 (%%writefile my_add.py), line {line}: SyntaxError" in result.diagnostics[0].message
    # Python keeps what its first import read: a file written again after it, or only after it, is not the kernel.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "%%writefile my_add.py\n" + SOLUTION, "from my_add import add_kernel", "%%writefile my_add.py\n" + WRONG_DRAFT])
    assert grade(notebook).puzzle("vector_add").status == "pass"
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "from my_add import add_kernel", "%%writefile my_add.py\n" + SOLUTION])
    assert grade(notebook).puzzle("vector_add").status == "error"
    # A file named as a module Python finds first (triton.py) is not the one imported.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "%%writefile triton.py\nimport os\nos._exit(0)\n", SOLUTION])
    assert grade(notebook).puzzle("vector_add").status == "pass"


def test_a_syntax_error_in_another_cell_costs_nothing(tmp_path, grade):
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", ["def broken(:\n    pass", SOLUTION])
    assert grade(notebook).puzzle("vector_add").status == "pass"


def test_a_syntax_error_in_the_kernel_is_an_error_with_its_cell_and_line(tmp_path, grade):
    broken = SOLUTION.replace("mask = offsets < n_elements", "mask = offsets < n_elements)")
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", ["import torch", broken])
    result = grade(notebook, puzzle="vector_add").puzzle("vector_add")
    assert result.status == "error"
    assert result.diagnostics[0].kind == "load_error"
    line = SOLUTION.splitlines().index("    mask = offsets < n_elements") + 1
    assert f"cell 2, line {line}: SyntaxError" in result.diagnostics[0].message


def test_missing_kernel_says_what_is_expected(tmp_path, grade):
    path = tmp_path / "vector_add.py"
    path.write_text("import triton\n")
    result = grade(path, puzzle="vector_add").puzzle("vector_add")
    assert result.status == "missing" and result.points == 0
    assert "no kernel named add_kernel in vector_add.py" in result.diagnostics[0].message
    assert "@triton.jit def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr)" in \
        result.diagnostics[0].message


def test_a_plain_function_is_not_a_kernel(tmp_path, grade):
    path = tmp_path / "vector_add.py"
    path.write_text(SOLUTION.replace("@triton.jit\n", ""))
    result = grade(path).puzzle("vector_add")
    assert result.status == "error"
    assert "add_kernel in vector_add.py is a plain Python function: decorate it with @triton.jit" in \
        result.diagnostics[0].message


def test_a_wrong_signature_is_an_error(tmp_path, grade):
    path = tmp_path / "vector_add.py"
    path.write_text(SOLUTION.replace("n_elements, BLOCK_SIZE", "BLOCK_SIZE"))
    result = grade(path).puzzle("vector_add")
    assert result.status == "error"
    assert "add_kernel in vector_add.py takes 4 parameters (x_ptr, y_ptr, out_ptr, BLOCK_SIZE) but the grader " \
        "passes 5" in result.diagnostics[0].message


@pytest.mark.parametrize("parameters,named", [("n_elements, *, BLOCK_SIZE", "BLOCK_SIZE"),
                                              ("n_elements, BLOCK_SIZE, **options", "**options"),
                                              ("*sizes, BLOCK_SIZE", "*sizes, BLOCK_SIZE")])
def test_parameters_after_a_star_are_an_error_that_names_them(tmp_path, grade, parameters, named):
    """Triton 3.9 launches a kernel with keyword-only parameters, 3.6 (the GPU stage's) does not; and what the
    grader passes by position they cannot take. Named, not counted as missing."""
    path = tmp_path / "vector_add.py"
    path.write_text(SOLUTION.replace("n_elements, BLOCK_SIZE", parameters))
    result = grade(path).puzzle("vector_add")
    assert result.status == "error"
    assert f"add_kernel in vector_add.py has parameters after a `*` ({named}): Triton 3.6" in \
        result.diagnostics[0].message


def test_a_helpers_keyword_only_parameters_are_named_as_such_not_as_undefined(tmp_path, grade):
    """A @jit helper taking its block after a `*` (which Triton 3.6 does not compile): the message says what is
    wrong with the parameters, not that the names they bind are undefined in the helper's body."""
    path = tmp_path / "vector_add.py"
    path.write_text(SOLUTION.replace("@triton.jit\ndef add_kernel", "@triton.jit\ndef offsets_of(pid, *, BLOCK: "
                                     "tl.constexpr):\n    return pid * BLOCK + tl.arange(0, BLOCK)\n\n\n"
                                     "@triton.jit\ndef add_kernel").replace(
        "pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)", "offsets_of(pid, BLOCK=BLOCK_SIZE)"))
    result = grade(path).puzzle("vector_add")
    message = result.diagnostics[0].message
    assert result.status == "fail" and "keyword-only parameters are not supported by Triton" in message, message
    assert "not defined" not in message


def test_annotations_triton_reads_are_kept_and_the_others_left_out(tmp_path, course):
    """Python's int, float and bool are Triton's i32, fp32 and i1; a return annotation or torch.Tensor Triton
    ignores: a kernel carrying them is graded (they were refused as host code), and they never run."""
    path = tmp_path / "vector_add.py"
    path.write_text("import torch\n" + SOLUTION.replace(
        "def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
        "def add_kernel(x_ptr: torch.Tensor, y_ptr, out_ptr, n_elements: int, BLOCK_SIZE: tl.constexpr) -> None:"))
    loaded = load_submission(path, course, ["vector_add"])["vector_add"]
    assert loaded.status == "found", [d.message for d in loaded.diagnostics]
    text = loaded.source.modules[MAIN]
    assert "n_elements: int" in text and "BLOCK_SIZE: tl.constexpr" in text
    assert "torch" not in text and "-> None" not in text


@pytest.mark.parametrize("applied", [
    "add_kernel = triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], "
    "key=['n_elements'])(_add)",
    "add_kernel = triton.heuristics({'EVEN': lambda args: args['n_elements'] % args['BLOCK_SIZE'] == 0})("
    "triton.jit(_add))",
    "add_kernel = triton.jit(_add)",
    "plain = _add\nadd_kernel = triton.jit(plain)",  # the grader crashed on the alias
])
def test_decorators_applied_as_calls_are_the_same_kernel(tmp_path, grade, applied):
    """Triton's decorators called on a function (a style of its own tests) make the kernel the decorated def makes:
    the notebook's check, which holds the object, passed it, and the command refused it as not a function."""
    kernel = SOLUTION.replace("def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
                              "def _add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN=False):")
    if "triton.jit(" in applied:  # a plain def, made a kernel by the calls alone
        kernel = kernel[:kernel.index("@triton.autotune(")] + kernel[kernel.index("def _add("):]
    path = tmp_path / "vector_add.py"
    path.write_text(kernel + "\n\n" + applied + "\n")
    result = grade(path).puzzle("vector_add")
    assert result.status == "pass", [d.message for d in result.diagnostics]


def test_a_configuration_that_leaves_a_constant_at_its_default_under_a_heuristic_runs_without_it(tmp_path, grade):
    """Triton's autotuner gives a heuristic below it a configuration's own constants alone: the cases run again
    without MASKED (the kernel's default applies, and the heuristic, which asks whether it is given, sees it not),
    and a failure there says so."""
    path = tmp_path / "vector_add.py"
    path.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "MASKED": False}, num_warps=4),
                                  triton.Config({"BLOCK_SIZE": 256}, num_warps=4)], key=["n_elements"])
        @triton.heuristics({"GIVEN": lambda args: "MASKED" in args})
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, GIVEN: tl.constexpr,
                       MASKED: tl.constexpr = True):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_elements - (0 if GIVEN else 1)
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                     mask=mask)
    '''))
    result = grade(path).puzzle("vector_add")
    message = result.cases[0].diagnostics[0].message
    assert result.status == "fail" and message.startswith(
        "With MASKED left at its default, as another of the kernel's tuning configurations gives it"), message


def test_triton_jit_of_another_files_def_is_refused_with_where_to_write_it(tmp_path, grade):
    plain = SOLUTION[:SOLUTION.index("@triton.autotune(")] + SOLUTION[SOLUTION.index("def add_kernel("):]
    (tmp_path / "my_add.py").write_text(plain.replace("def add_kernel(", "def add("))
    path = tmp_path / "vector_add.py"
    path.write_text("import triton\nfrom my_add import add\n\nadd_kernel = triton.jit(add)\n")
    result = grade(tmp_path).puzzle("vector_add")  # a folder's files import each other
    assert result.status == "error" and "triton.jit of `add`, a def of another file: write @triton.jit above the def " \
        "in its file" in result.diagnostics[0].message, [d.message for d in result.diagnostics]


TUNED = SOLUTION.replace("BLOCK_SIZE: tl.constexpr):", "BLOCK_SIZE: tl.constexpr, ADD_Y: tl.constexpr):").replace(
    "x + y, mask", "x + y * ADD_Y, mask")


@pytest.mark.parametrize("configs,graded", [
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': 1})]", True),
    ("[triton.Config(kwargs={'ADD_Y': 1}, num_warps=4)]", True),
    ("LISTED", True),  # a module-level list, bound once
    # Given unlike, every case runs with each value: the second's 0 leaves y out, and the kernel fails there.
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': 0})]", "fail"),
    # 1 and True, or True and 0, are two launches of the kernel (two specialisations): each runs every case.
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': True})]", True),
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': True}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': 0})]", "fail"),
    # Which values Triton launches with is not the grader's to say where the configurations could give others.
    ("[triton.Config({'ADD_Y': 1})] if CHEAP else [triton.Config({'ADD_Y': 0})]", False),
    # A comprehension over lists written out (Triton's persistent matmul tutorial), ranges, with filters of
    # arithmetic, gives each of its values; one with a call the grader does not make gives none.
    ("[triton.Config({'BLOCK_SIZE': b, 'ADD_Y': 1}, num_warps=w) for b in (256, 512) for w in [4, 8]]", True),
    ("[triton.Config({'BLOCK_SIZE': b, 'ADD_Y': a}) for b, a in ((256, 1), (512, 1))]", True),
    ("[triton.Config({'BLOCK_SIZE': b, 'ADD_Y': 1}) for b in (256, 512) if b > 256]", True),
    ("[triton.Config({'ADD_Y': a}) for a in (1, 0)]", "fail"),
    ("[triton.Config({'ADD_Y': a}) for a in range(1, -1, -1)]", "fail"),
    ("[triton.Config({'BLOCK_SIZE': b, 'ADD_Y': a}) for b in (256, 512) for a in (1, 0) if b > 256]", "fail"),
    ("[triton.Config({'BLOCK_SIZE': b, 'ADD_Y': a}) for b in (256, 512) for a in (1, 0) if abs(b) > 256]", False),
    ("[triton.Config({'ADD_Y': a}) for a in sorted((1, 0))]", False),
    ("configs()", False),  # configs() is defined twice: the decorator sees the first, the module keeps the second
    # Module constants bound once to a number (GROUP_SIZE_M = 8 above the configurations) are read; one bound twice
    # is not the grader's to say.
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': ONE})]", True),
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': ONE}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': ZERO})]", "fail"),
    ("[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': TWICE})]", False),
])
def test_a_parameter_the_configurations_give_is_read_only_where_every_one_gives_it_written_out(tmp_path, grade, configs,
                                                                                               graded):
    path = tmp_path / "vector_add.py"
    path.write_text("import triton\nimport triton.language as tl\nCHEAP = False\nONE = 1\nZERO = 0\n"
                    "TWICE = 1\nTWICE = 2\n"
                    "LISTED = [triton.Config({'ADD_Y': 1}, num_warps=8)]\n\n\ndef configs():\n"
                    "    return [triton.Config({'ADD_Y': 0})]\n\n\n" +
                    TUNED.replace("@triton.jit", f"@triton.autotune(configs={configs}, key=[])\n@triton.jit").replace(
                        "import triton\nimport triton.language as tl\n", "") +
                    "\n\ndef configs():\n    return [triton.Config({'ADD_Y': 1})]\n")
    result = grade(path).puzzle("vector_add")
    if graded == "fail":
        assert result.status == "fail" and result.cases[0].diagnostics[0].message.startswith(
            "With ADD_Y=0, as another of the kernel's tuning configurations gives it")
        assert result.cases[0].replay.endswith("BLOCK_SIZE=16, ADD_Y=0)") or "ADD_Y=0" in result.cases[0].replay
    elif graded:
        assert result.status == "pass", [d.message for d in result.diagnostics]
    else:
        assert result.status == "error" and "must be written out (a number, boolean or string" in result.diagnostics[0].message


@pytest.mark.parametrize("pruner,graded", [
    # The autotuner launches only what its early_config_prune keeps for a launch: ADD_Y=0 never, here.
    ("return [c for c in configs if c.kwargs['ADD_Y'] == 1]", "pass"),
    ("return [c for c in configs if c.kwargs['ADD_Y'] == 1 or named_args['n_elements'] > 10 ** 6]", "pass"),
    # Kept for the cases' sizes: it runs there, and fails.
    ("return [c for c in configs if c.kwargs['ADD_Y'] == 1 or named_args['n_elements'] < 10 ** 6]", "fail"),
    # The first configuration kept off: the case runs with the second's constants, as the autotuner would.
    ("return configs[1:]", "fail first"),
    # New configurations of the same constants (other warps or stages, as triton.ops' pruner makes them)
    ("return [triton.Config(dict(c.kwargs), num_stages=2) for c in configs if c.kwargs['ADD_Y'] == 1]", "pass"),
    # It sees the tensors' sizes, strides and dtypes, not their values: a tensor it keeps could not give it x + y
    # of x alone; one that changes what it did not make in place (y zeroed here would be on a GPU) stops the puzzle.
    ("y = named_args['y_ptr']\n    return [c for c in configs if c.kwargs['ADD_Y'] == 1 and y.dtype is not None]",
     "pass"),
    ("y = named_args['y_ptr']\n    y *= 0\n    return [c for c in configs if c.kwargs['ADD_Y'] == 1]", "stopped"),
    ("y = named_args['n_elements']\n    y *= 0\n    return [c for c in configs if c.kwargs['ADD_Y'] == 1 + y]",
     "pass"),
    # A new triton.Config equal to a listed one, as a pruner returns one of a module's own list: that one.
    ("return [triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1})]", "pass"),
    # Host code in the kernel's module gets Python's range while the kernel is interpreted (a loop's variable is
    # made a tensor-like int there only).
    ("return [c for c in configs if len(range(c.kwargs['ADD_Y'])) == 1 and list(reversed(range(2)))[0] == 1]",
     "pass"),
    # A configuration of blocks the kernel does not list, which the autotuner would launch (on an H200 a kernel wrong
    # only there was): the puzzle stops, the pruner named.
    ("return [triton.Config({'BLOCK_SIZE': 8192, 'ADD_Y': 1}, num_warps=8)]", "unlisted"),
    # A pruner that raises here (one asking for the GPU's properties) or keeps nothing prunes nothing, said so.
    ("return configs[10]", "raised"),
    ("return []", "raised"),
])
def test_a_case_runs_with_the_configurations_the_kernels_pruner_keeps_for_it(tmp_path, grade, pruner, graded):
    path = tmp_path / "vector_add.py"
    configs = "[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': 0})]"
    path.write_text(f"import triton\nimport triton.language as tl\n\n\ndef prune(configs, named_args, **kwargs):\n"
                    f"    {pruner}\n\n\n" +
                    TUNED.replace("@triton.jit", f"@triton.autotune(configs={configs}, key=[], "
                                                 "prune_configs_by={'early_config_prune': prune})\n@triton.jit")
                    .replace("import triton\nimport triton.language as tl\n", ""))
    result = grade(path).puzzle("vector_add")
    if graded == "pass":
        assert result.status == "pass", [d.message for d in result.diagnostics]
        # The case at the second configuration's blocks (512) runs only where the pruner keeps it.
        assert [note.split(" not run: ")[0] for note in result.notes] == ["many blocks (blocks BLOCK_SIZE=512)"]
    elif graded == "raised":
        assert result.status == "fail" and any("early_config_prune raised" in note for note in result.notes), \
            result.notes
    elif graded == "unlisted":
        message = result.diagnostics[0].message
        assert result.status == "error" and "its early_config_prune, run for a case's launch: it returned " \
            "triton.Config({'BLOCK_SIZE': 8192, 'ADD_Y': 1}, num_warps=8, num_stages=3), which is not among the " \
            "kernel's tuning configurations" in message, message
    elif graded == "stopped":
        message = result.diagnostics[0].message
        assert result.status == "error" and "line 7: y *= 0\n" in message and \
            "`y *= ...` would change the Tensor `y` holds in place" in message, message
    else:
        message = result.cases[0].diagnostics[0].message
        assert result.status == "fail" and message.startswith(
            "With ADD_Y=0, as another of the kernel's tuning configurations gives it"), message
        assert ("keeps the first configuration off this case" in message) == (graded == "fail first")


@pytest.mark.parametrize("asks", [
    "torch.cuda.get_device_properties(0).multi_processor_count == 132",
    "torch.cuda.get_device_capability() == (9, 0) and torch.cuda.device_count() == 1",
    "driver.active.utils.get_device_properties(driver.active.get_current_device())['multiprocessor_count'] == 132",
    "get_device_properties(torch.cuda.current_device()).shared_memory_per_block_optin == 232448",
    "driver.active.get_current_target().arch == 90",
])
def test_a_pruner_is_told_it_runs_on_the_gpu_stages_gpu(tmp_path, grade, asks):
    """Host code asking which GPU it runs on, as Triton's tutorials ask the driver and libraries ask torch.cuda, is
    answered in the sandbox as on the GPU stage's machines (sm_90, 132 SMs): this pruner keeps the configuration
    that leaves y out (ADD_Y=0) off every launch there, so the kernel is right on those GPUs."""
    path = tmp_path / "vector_add.py"
    configs = "[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': 0})]"
    path.write_text("import torch\nimport triton\nimport triton.language as tl\nfrom torch.cuda import "
                    "get_device_properties\nfrom triton.runtime import driver\n\n\n"
                    f"def prune(configs, named_args, **kwargs):\n    on_the_gpu_stage = {asks}\n"
                    "    return [c for c in configs if c.kwargs['ADD_Y'] == 1 or not on_the_gpu_stage]\n\n\n" +
                    TUNED.replace("@triton.jit", f"@triton.autotune(configs={configs}, key=[], "
                                                 "prune_configs_by={'early_config_prune': prune})\n@triton.jit")
                    .replace("import triton\nimport triton.language as tl\n", ""))
    result = grade(path).puzzle("vector_add")
    assert result.status == "pass", [d.message for d in result.diagnostics] + result.notes
    assert [note.split(" not run: ")[0] for note in result.notes] == ["many blocks (blocks BLOCK_SIZE=512)"]


def test_a_pruner_may_ask_torch_cuda_what_gpu_it_is_and_nothing_more(tmp_path, grade):
    """torch.cuda's other functions act on a GPU (synchronize, allocate, set the device): host code the grader does
    not run, said so, and every configuration runs on every case."""
    path = tmp_path / "vector_add.py"
    configs = "[triton.Config({'BLOCK_SIZE': 256, 'ADD_Y': 1}), triton.Config({'BLOCK_SIZE': 512, 'ADD_Y': 0})]"
    path.write_text("import torch\nimport triton\nimport triton.language as tl\n\n\n"
                    "def prune(configs, named_args, **kwargs):\n    torch.cuda.synchronize()\n"
                    "    return [c for c in configs if c.kwargs['ADD_Y'] == 1]\n\n\n" +
                    TUNED.replace("@triton.jit", f"@triton.autotune(configs={configs}, key=[], "
                                                 "prune_configs_by={'early_config_prune': prune})\n@triton.jit")
                    .replace("import triton\nimport triton.language as tl\n", ""))
    result = grade(path).puzzle("vector_add")
    assert result.status == "fail" and any(
        "host code the grader does not run (torch.cuda.synchronize: torch.cuda has no `synchronize` the grader "
        "evaluates for a submission)"
        in note for note in result.notes), result.notes


def test_host_code_cannot_read_which_device_a_tensor_is_on(tmp_path, grade):
    """The sandbox's tensors are on no GPU: a heuristic that read `.device` could tell the grader from a GPU."""
    path = tmp_path / "vector_add.py"
    path.write_text(SOLUTION.replace("@triton.jit", "@triton.heuristics({'BLOCK_SIZE': lambda args: 128 if "
                                                    "args['x_ptr'].device.type == 'cuda' else 256})\n@triton.jit"))
    result = grade(path).puzzle("vector_add")
    assert result.status == "error" and "`.device` is not something the grader evaluates" in \
        result.diagnostics[0].message, [d.message for d in result.diagnostics]


def test_the_gpu_host_code_is_told_of_is_answered_only_within_the_block():
    import torch
    import triton

    from grader.pipeline.configs import on_the_gpu
    asked = torch.cuda.get_device_properties
    with on_the_gpu(80):
        assert torch.cuda.get_device_properties(0).multi_processor_count == 108
        assert triton.runtime.driver.active.get_current_target().arch == 80
        with on_the_gpu(90):
            assert torch.cuda.get_device_capability() == (9, 0)
        assert torch.cuda.get_device_capability() == (8, 0)
    with on_the_gpu(75), pytest.raises(RuntimeError, match="knows no GPU of compute capability 75"):
        torch.cuda.get_device_properties(0)
    assert torch.cuda.get_device_properties is asked and triton.runtime.driver.__dict__.get("_active") is None


def test_the_estimate_is_of_the_first_configuration_the_pruner_keeps_at_the_benchmarks_size(tmp_path, course):
    path = tmp_path / "vector_add.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n"
        "def wide_at_large_sizes(configs, named_args, **kwargs):\n"
        "    return configs[1:] if named_args['n_elements'] >= 2 ** 20 else configs\n\n\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 1024}), triton.Config({'BLOCK_SIZE': 2048})],\n"
        "                 key=['n_elements'], prune_configs_by={'early_config_prune': wide_at_large_sizes})\n"
        "@triton.jit\n"
        "def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    mask = offsets < n_elements\n"
        "    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),\n"
        "             mask=mask)\n")
    result = grade_submission(course, path, ["vector_add"], performance=True).puzzle("vector_add")
    assert result.status == "pass" and result.performance["config"]["kwargs"] == {"BLOCK_SIZE": 2048}


@pytest.mark.parametrize("operation,status", [("add", "pass"), ("subtract", "fail")])
def test_a_string_the_configurations_give_a_parameter_is_its_value(tmp_path, grade, operation, status):
    """A constant of any type a constexpr takes, as the matmul tutorial's ACTIVATION: a string."""
    path = tmp_path / "vector_add.py"
    path.write_text(f"""import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({{"BLOCK_SIZE": 1024, "OPERATION": "{operation}"}}, num_warps=w)
                          for w in (4, 8)], key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, OPERATION: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements)
    y = tl.load(y_ptr + offsets, mask=offsets < n_elements)
    if OPERATION == "add":
        out = x + y
    else:
        out = x - y
    tl.store(out_ptr + offsets, out, mask=offsets < n_elements)
""")
    result = grade(path).puzzle("vector_add")
    assert result.status == status, [d.message for d in result.diagnostics]


def test_each_module_level_name_is_bound_as_python_would_leave_it(tmp_path):
    path = tmp_path / "vector_add.py"
    path.write_text("import does_not_exist\nimport os\nos._exit(3)\nBLOCK = 128\nSCALE = tl.constexpr(2.0)\n"
                    "def helper():\n    pass\n" + SOLUTION + "\nadd_kernel[(1,)](1, 2, 3)\nBLOCK = os.cpu_count()\n")
    names = ModuleDefinitions(read_file(path, DEFAULT)).names
    kinds = {name: binding.kind for name, binding in names.items()}
    # SCALE reads `tl` before the file imports it: Python would fail there too.
    assert kinds == {"does_not_exist": "host", "os": "host", "SCALE": "host", "helper": "function",
                     "triton": "known", "tl": "known", "add_kernel": "jit", "BLOCK": "host"}
    assert "os.cpu_count()" in names["BLOCK"].reason, "the last binding wins, and it is host code"


def test_a_directory_grades_every_puzzle_and_survives_a_corrupt_notebook(tmp_path, grade):
    (tmp_path / "vector_add.py").write_text(SOLUTION)
    (tmp_path / "02_outer_add.ipynb").write_text('{"cells": [ this is not json')
    (tmp_path / "03_strided_views.ipynb").write_text("")
    report = grade(tmp_path)
    statuses = {p.id: p.status for p in report.puzzles}
    assert statuses.pop("vector_add") == "pass"
    assert statuses.pop("outer_add") == statuses.pop("strided_views") == "error"
    assert set(statuses.values()) == {"missing"}
    assert "02_outer_add.ipynb is not a readable notebook" in report.puzzle("outer_add").diagnostics[0].message


def test_kernels_are_found_by_name_in_any_file_of_a_directory(tmp_path, grade):
    (tmp_path / "everything.py").write_text(SOLUTION + (ROOT / "solutions" / "outer_add.py").read_text())
    statuses = {p.id: p.status for p in grade(tmp_path).puzzles}
    assert statuses.pop("vector_add") == statuses.pop("outer_add") == "pass"
    assert set(statuses.values()) == {"missing"}


def test_a_single_file_grades_the_puzzles_it_defines(grade):
    report = grade(ROOT / "solutions" / "outer_add.py")
    assert [p.id for p in report.puzzles] == ["outer_add"]


@pytest.mark.parametrize("name,content,message", [
    ("nope", None, "no such file or directory"),
    ("notes.txt", "hello", "expected a .py file, a .ipynb notebook or a directory"),
])
def test_unusable_paths_raise_submission_error(tmp_path, grade, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(SubmissionError, match=message):
        grade(path)


def test_an_empty_directory_is_unusable(tmp_path, grade):
    with pytest.raises(SubmissionError, match="no .py or .ipynb files"):
        grade(tmp_path)


def test_a_directory_of_unreadable_files_says_why_each_was_not_read(tmp_path, course):
    (tmp_path / "kern.py").write_bytes(b"\xff\xfe\x00not text")
    (tmp_path / "nb.ipynb").write_text("{not json")
    with pytest.raises(SubmissionError) as raised:
        load_submission(tmp_path, course, ["vector_add"])
    assert "none of its files could be read" in str(raised.value)
    assert "kern.py is not readable Python text" in str(raised.value)
    assert "nb.ipynb is not a readable notebook" in str(raised.value)


def test_a_kernel_not_found_names_the_files_that_could_not_be_read(tmp_path, course):
    """The kernel may be in the file (or cell) that could not be read: the student is told to fix that one, not
    only that the kernel is missing."""
    (tmp_path / "kern.py").write_bytes(b"\xff\xfe\x00not text")
    (tmp_path / "scratch.py").write_text("def broken(:\n")
    (tmp_path / "softmax.py").write_text((ROOT / "solutions" / "softmax.py").read_text())
    loaded = load_submission(tmp_path, course, ["vector_add", "softmax"])
    assert loaded["softmax"].status == "found"
    missing = loaded["vector_add"]
    assert missing.status == "missing"
    assert [d.kind for d in missing.diagnostics] == ["missing", "load_error"]
    assert "no kernel named add_kernel in scratch.py, softmax.py" in missing.diagnostics[0].message
    unread = missing.diagnostics[1].message
    assert "kern.py is not readable Python text" in unread and "scratch.py, line 1: SyntaxError" in unread

    from grader.pipeline.report import to_text
    from grader.pipeline.results import GradeReport, PuzzleResult
    puzzle = course.puzzle("vector_add")
    report = GradeReport([PuzzleResult(puzzle.id, puzzle.title, "missing", 0, 10, None, [], missing.diagnostics)])
    assert "kern.py is not readable Python text" in to_text(report)


def test_a_cell_of_thousands_of_shell_escapes_is_refused_before_ipython_rereads_it(tmp_path, course):
    """IPython's transformers read a cell again for each `x = !ls`: 8 kB of them kept the grader busy for a minute.
    The cell is refused at once; the kernel in the next one is read."""
    import time
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", ["a = !ls\n" * 1000, SOLUTION])
    started = time.monotonic()
    loaded = load_submission(notebook, course, ["vector_add"])["vector_add"]
    assert time.monotonic() - started < 5
    assert loaded.status == "found"
    file = read_file(notebook, DEFAULT)
    assert "1000 lines of shell commands, magics or help" in file.sources[0].problem
    assert file.sources[1].tree is not None
    # What only looks like them is read: questions in comments, %-formatting, f-strings' `=!r`.
    notes = "".join(f"# why does block {i} need a mask?\nprint('n=%d block=%d' % ({i}, {i}), f'{{n=!r}}')\n"
                    for i in range(200))
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [notes + SOLUTION])
    assert load_submission(notebook, course, ["vector_add"])["vector_add"].status == "found"


def test_an_unknown_puzzle_is_unusable(grade):
    with pytest.raises(SubmissionError, match="no puzzle 'nope'"):
        grade(ROOT / "solutions", puzzle="nope")


def test_a_kernel_that_never_ends_costs_only_its_own_puzzle(course, tmp_path, worker_requests):
    """One worker runs a submission's puzzles in turn, the one with the most work first: here the one that hangs,
    after which a fresh worker takes up the other two."""
    hanging = (ROOT / "solutions" / "strided_views.py").read_text().replace(
        "    rows = tl.program_id(0)",
        "    spin = M\n    while spin >= 0:\n        spin += 0\n        spin -= 0\n        spin *= 1\n    rows = tl.program_id(0)")
    (tmp_path / "strided_views.py").write_text(hanging)
    for puzzle_id in ("vector_add", "outer_add"):
        (tmp_path / f"{puzzle_id}.py").write_text((ROOT / "solutions" / f"{puzzle_id}.py").read_text())
    report = grade_submission(course, tmp_path, ["vector_add", "outer_add", "strided_views"],
                              settings=Settings(puzzle_timeout_s=10))
    vector_add, outer_add, strided_views = report.puzzles
    batches = [[job["kernel"] for job in jobs] for jobs in worker_requests]
    assert len(batches) == 1 and batches[0][0] == "add_one_kernel" and len(batches[0]) == 3  # strided_views's
    assert strided_views.status == "error" and strided_views.diagnostics[0].kind == "timeout"
    assert "no result after 10 s" in strided_views.diagnostics[0].message
    assert vector_add.status == outer_add.status == "pass"


def test_links_fifos_and_devices_in_a_submission_are_refused_never_followed(tmp_path, grade):
    other_student = tmp_path / "bob"
    other_student.mkdir()
    (other_student / "01_vector_add.py").write_text(SOLUTION)
    alice = tmp_path / "alice"
    alice.mkdir()
    (alice / "vector_add.py").symlink_to(ROOT / "solutions" / "vector_add.py")
    (alice / "01_vector_add.py").symlink_to(other_student / "01_vector_add.py")
    os.mkfifo(alice / "outer_add.py")  # reading it would block forever
    with pytest.raises(SubmissionError) as nothing_read:
        grade(alice)
    assert "none of its files could be read" in str(nothing_read.value)
    assert "01_vector_add.py is a symbolic link" in str(nothing_read.value)
    assert "outer_add.py is a FIFO" in str(nothing_read.value)
    (alice / "notes.py").write_text("SCALE = 2\n")
    report = grade(alice)
    vector_add, outer_add = report.puzzle("vector_add"), report.puzzle("outer_add")
    assert vector_add.status == "error" and vector_add.points == 0
    assert "is a symbolic link: the grader does not follow links" in vector_add.diagnostics[0].message
    assert outer_add.status == "error" and "is a FIFO" in outer_add.diagnostics[0].message
    assert report.points == 0


def test_a_linked_submission_is_unusable(tmp_path, grade):
    link = tmp_path / "vector_add.py"
    link.symlink_to(ROOT / "solutions" / "vector_add.py")
    with pytest.raises(SubmissionError, match="is a symbolic link"):
        grade(link)
    folder = tmp_path / "folder"
    folder.symlink_to(ROOT / "solutions")
    with pytest.raises(SubmissionError, match="is a symbolic link"):
        grade(folder)


def test_a_file_name_that_is_not_text_is_shown_escaped(tmp_path, grade):
    folder = tmp_path / "student"
    folder.mkdir()
    name = os.fsdecode(b"vector_add\xff\nTotal: 10.py")
    (folder / name).write_text(SOLUTION)
    result = grade(folder).puzzle("vector_add")
    assert result.status == "pass"
    assert "\n" not in result.source and "\\n" in result.source


NO_MASK = SOLUTION.replace(", mask=mask)", ")")
SKELETON = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
            "def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
            "    # YOUR CODE HERE\n    raise NotImplementedError()\n")


def test_a_solved_copy_beats_the_untouched_skeleton(tmp_path, grade):
    write_notebook(tmp_path / "01_vector_add.ipynb", [SKELETON])
    write_notebook(tmp_path / "01_vector_add-Copy1.ipynb", [SOLUTION])
    result = grade(tmp_path).puzzle("vector_add")
    assert result.status == "pass" and result.source == "01_vector_add-Copy1.ipynb"
    assert any("01_vector_add.ipynb also defines add_kernel" in note and "untouched skeleton" in note
               for note in result.notes), result.notes


def test_a_final_file_beats_a_draft(tmp_path, grade):
    (tmp_path / "draft_vector_add.py").write_text(NO_MASK)
    (tmp_path / "vector_add_final.py").write_text(SOLUTION)
    result = grade(tmp_path).puzzle("vector_add")
    assert result.status == "pass" and result.source == "vector_add_final.py"
    assert any("draft_vector_add.py also defines add_kernel" in note for note in result.notes), result.notes


def test_the_puzzles_own_file_beats_a_scratch_file(tmp_path, grade):
    (tmp_path / "scratch.py").write_text(NO_MASK)
    write_notebook(tmp_path / "01_vector_add.ipynb", [SOLUTION])
    result = grade(tmp_path).puzzle("vector_add")
    assert result.status == "pass" and result.source == "01_vector_add.ipynb"


def test_two_different_kernels_with_nothing_to_choose_between_them_are_refused_by_name(tmp_path, grade):
    (tmp_path / "mine.py").write_text(NO_MASK)
    (tmp_path / "ours.py").write_text(SOLUTION)
    result = grade(tmp_path).puzzle("vector_add")
    assert result.status == "error" and result.points == 0
    message = result.diagnostics[0].message
    assert "mine.py and ours.py both define add_kernel, differently" in message and "delete one" in message


def test_the_same_kernel_in_two_files_is_graded_once(tmp_path, grade):
    (tmp_path / "a.py").write_text(SOLUTION)
    (tmp_path / "b.py").write_text(SOLUTION)
    result = grade(tmp_path).puzzle("vector_add")
    assert result.status == "pass" and result.source == "a.py"
    assert result.notes == ["b.py defines the same add_kernel: not graded separately"]


def test_helpers_are_imported_from_sibling_files(tmp_path, grade):
    (tmp_path / "helpers.py").write_text(
        "import triton\nimport triton.language as tl\n\nSCALE = tl.constexpr(1.0)\n\n\n"
        "@triton.jit\ndef add_scaled(a, b):\n    return (a + b) * SCALE\n\n\n"
        "@triton.jit\ndef offsets_of(pid, BLOCK: tl.constexpr):\n    return pid * BLOCK + tl.arange(0, BLOCK)\n")
    (tmp_path / "vector_add.py").write_text(
        "import triton\nimport triton.language as tl\nimport helpers\nfrom helpers import add_scaled as add\n\n\n"
        "@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        "    offsets = helpers.offsets_of(tl.program_id(0), BLOCK_SIZE)\n    mask = offsets < n_elements\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n    y = tl.load(y_ptr + offsets, mask=mask)\n"
        "    tl.store(out_ptr + offsets, add(x, y), mask=mask)\n")
    result = grade(tmp_path, puzzle="vector_add").puzzle("vector_add")
    assert result.status == "pass", [d.message for d in result.diagnostics]


def test_a_lone_file_imports_nothing_beside_it(tmp_path, grade):
    """In a class folder, the file beside a student's file is another student's."""
    (tmp_path / "bob.py").write_text(SOLUTION)
    (tmp_path / "alice.py").write_text("from bob import add_kernel\n")
    result = grade(tmp_path / "alice.py", puzzle="vector_add").puzzle("vector_add")
    assert result.status == "error" and result.points == 0
    assert "imported by `from bob import add_kernel`" in result.diagnostics[0].message


@pytest.mark.parametrize("saved_as", ["windows line ends and a byte order mark", "old mac line ends", "tabs",
                                      "latin-1 with its coding line"])
def test_a_file_saved_by_another_editor_loads_the_very_same_kernel(tmp_path, course, saved_as):
    """Python reads all of these; so must the grader, or a student on Windows fails a correct kernel."""
    from grader.pipeline.load import load_submission
    path = tmp_path / "vector_add.py"
    if saved_as == "windows line ends and a byte order mark":
        path.write_bytes(b"\xef\xbb\xbf" + SOLUTION.replace("\n", "\r\n").encode())
    elif saved_as == "old mac line ends":
        path.write_bytes(SOLUTION.replace("\n", "\r").encode())
    elif saved_as == "tabs":
        path.write_text(SOLUTION.replace("    ", "\t"))
    else:
        path.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + SOLUTION).encode("latin-1"))
    [loaded] = load_submission(path, course, ["vector_add"]).values()
    plain = load_submission(ROOT / "solutions" / "vector_add.py", course, ["vector_add"])["vector_add"]
    assert loaded.status == "found", [d.message for d in loaded.diagnostics]
    assert loaded.source.modules == plain.source.modules


def test_a_long_session_keeps_its_latest_cells_and_says_when_it_read_too_little():
    """Every run counts, in order (an imports cell run again after the kernel's binds triton after it); where the
    session ran more than the grader reads, the report says which cells were left out and what to do."""
    from types import SimpleNamespace

    from grader.pipeline.load.files import session_sources
    kernel = "import triton\n@triton.jit\ndef k(x):\n    pass\n"
    history = ["", "import triton.language as tl", kernel, "x = 1", kernel]
    shell = SimpleNamespace(history_manager=SimpleNamespace(input_hist_raw=history))
    assert [s.label for s in session_sources(shell, Settings(code_chars=200))] == ["In [1]", "In [2]", "In [3]",
                                                                                  "In [4]"]
    sources = session_sources(shell, Settings(code_chars=60))
    assert sources[0].problem and "In [2] and before were not read" in sources[0].problem
    assert "restart the kernel" in sources[0].problem
    assert [s.label for s in sources[1:]] == ["In [3]", "In [4]"]


SESSION = r'''
import json, os, sys
os.environ["TRITON_INTERPRET"] = "1"
from IPython.core.interactiveshell import InteractiveShell
from grader.course import load_course
from grader.pipeline.load import load_live
cells, name = json.loads(sys.argv[1]), sys.argv[2]
shell = InteractiveShell.instance()
for cell in cells:
    assert shell.run_cell(cell, store_history=True).success, cell
loaded = load_live(shell.user_ns[name], load_course().puzzle("vector_add"))
print(json.dumps([loaded.status, [d.message for d in loaded.diagnostics]]))
'''


@pytest.mark.parametrize("scenario", ["imports run again after the kernel", "the kernel's cell run again",
                                      "an alias's function run again", "triton.jit called, its function run again",
                                      "a kernel under another name"])
def test_a_sessions_cells_count_every_run_in_order(tmp_path, scenario):
    """check() reads the cells as the session ran them: run again, a cell binds its names again after the others
    (the imports after the kernel, an alias's function after the alias); a kernel the autograder would not find
    by the puzzle's name is refused."""
    import json
    import subprocess
    import sys
    imports = "import triton\nimport triton.language as tl"
    kernel = ("@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
              "    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
              "    mask = offsets < n_elements\n"
              "    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, "
              "mask=mask), mask=mask)\n")
    under = kernel.replace("def add_kernel", "def my_kernel")
    plain = kernel.replace("@triton.jit\n", "").replace("def add_kernel", "def _add")
    cells, name = {
        "imports run again after the kernel": ([imports, kernel, imports], "add_kernel"),
        "the kernel's cell run again": ([imports, kernel, "x = 1", kernel], "add_kernel"),
        "an alias's function run again": ([imports, under, "add_kernel = my_kernel", under], "add_kernel"),
        "triton.jit called, its function run again": ([imports, plain, "add_kernel = triton.jit(_add)", plain],
                                                     "add_kernel"),
        "a kernel under another name": ([imports, under], "my_kernel"),
    }[scenario]
    env = {**os.environ, "IPYTHONDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", SESSION, json.dumps(cells), name], capture_output=True, text=True,
                            env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    status, messages = json.loads(result.stdout.strip().splitlines()[-1])
    if scenario == "a kernel under another name":
        assert status == "error" and "the autograder grades the kernel named add_kernel" in messages[0]
    else:
        assert status == "found", messages


def test_a_bare_annotation_binds_nothing(tmp_path, grade):
    """`SCALE: tl.constexpr` alone, after SCALE is set, leaves SCALE as it was (Python binds nothing there)."""
    path = tmp_path / "vector_add.py"
    path.write_text(SOLUTION.replace("@triton.autotune", "SCALE = tl.constexpr(1)\nSCALE: tl.constexpr\n\n\n"
                                                        "@triton.autotune").replace(
        "x + y", "(x + y) * SCALE"))
    assert "(x + y) * SCALE" in path.read_text()
    assert grade(path).puzzle("vector_add").status == "pass"


def test_a_kernel_named_through_its_modules_attribute_is_found(tmp_path, grade, course):
    """`import mykern` then `add_kernel = mykern.fast_add` in a notebook: the check cell passed it, the command
    line refused it as not a function."""
    (tmp_path / "mykern.py").write_text(SOLUTION.replace("def add_kernel", "def fast_add"))
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [
        "import mykern\nadd_kernel = mykern.fast_add", "check('vector_add', add_kernel)"])
    assert grade(tmp_path).puzzle("vector_add").status == "pass"
    assert grade_submission(course, notebook, ["vector_add"], modules_from=tmp_path).puzzle(
        "vector_add").status == "pass"


def test_a_kernel_a_notebook_runs_from_its_folder_with_run_magic_is_found(tmp_path, course):
    """`%run my_kernels.py` (or `from my_kernels import *`): the check cell passed the kernel the file defines, the
    command line said it was missing."""
    (tmp_path / "my_kernels.py").write_text(SOLUTION)
    for cell in ("%run my_kernels.py", "from my_kernels import *", "%run ./my_kernels.py", '%run "my_kernels.py"',
                 "%run -i my_kernels.py"):
        notebook = write_notebook(tmp_path / "01_vector_add.ipynb", [cell, "check('vector_add', add_kernel)"])
        loaded = load_submission(notebook, course, ["vector_add"], modules_from=tmp_path)["vector_add"]
        assert loaded.status == "found", cell
    # The folder's own file and the notebook that runs it or imports from it define one kernel, not two.
    for cell in ("%run my_kernels.py", "from my_kernels import *", "from my_kernels import add_kernel"):
        write_notebook(tmp_path / "puzzle.ipynb", [cell, "check('vector_add', add_kernel)"])
        loaded = load_submission(tmp_path, course, ["vector_add"])["vector_add"]
        assert loaded.status == "found", (cell, loaded.diagnostics)
    (tmp_path / "puzzle.ipynb").unlink()
    # A file that is not the submission's runs nothing the grader can see: still missing, as before.
    notebook = write_notebook(tmp_path / "01_vector_add.ipynb", ["%run ../elsewhere.py", "check('vector_add', add_kernel)"])
    assert load_submission(notebook, course, ["vector_add"], modules_from=tmp_path)["vector_add"].status == "missing"


TUNED_ADD = '''import triton
import triton.language as tl

SIZES = (128, 256)


@triton.autotune(configs={configs}, key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr, UNROLL: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
'''


@pytest.mark.parametrize("configs, blocks, unrolls", [
    ("[triton.Config({'BLOCK_SIZE': 2 ** p, 'UNROLL': 1}) for p in range(7, 9)]", [128, 256], [1]),
    ("[triton.Config({'BLOCK_SIZE': b, 'UNROLL': u}) for b in SIZES for u in (1, 2)]", [128, 256], [1, 2]),
    ("[triton.Config({'BLOCK_SIZE': b, 'UNROLL': w // 4}, num_warps=w) for b in [128, 256, 512] for w in [4, 8] "
     "if b * w <= 1024 and not b == 256]", [128], [1, 2]),
    # `and`/`or` give the operand that decides, as in Python
    ("[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': w >= 8 and 2 or 1}, num_warps=w) for w in (4, 8)]", [128], [1, 2]),
])
def test_configurations_a_comprehension_computes_are_read_without_running_it(tmp_path, course, configs, blocks,
                                                                              unrolls):
    """Loops over range(), tuples and module constants, values computed from the loop variables (2 ** p) and
    filters of arithmetic are read: each configuration's blocks are checked, and each value of the kernel's own
    parameter runs the cases."""
    path = tmp_path / "tuned.py"
    path.write_text(TUNED_ADD.replace("{configs}", configs))
    source = load_submission(path, course, ["vector_add"])["vector_add"].source
    assert sorted({dict(given)["BLOCK_SIZE"] for given in source.configured_blocks}) == blocks
    assert [source.tuned["UNROLL"]] + [variant["UNROLL"] for variant in source.variants] == unrolls


@pytest.mark.parametrize("default, configs, unrolls, written", [
    # a configuration that leaves UNROLL out launches the kernel with its default: that value runs the cases too
    ("1", "[triton.Config({'BLOCK_SIZE': 128}), triton.Config({'BLOCK_SIZE': 256, 'UNROLL': 2})]", [1, 2], {}),
    ("1", "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': 4}), triton.Config({'BLOCK_SIZE': 256})]", [4, 1], {}),
    ("2", "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': 2}), triton.Config({'BLOCK_SIZE': 256})]", [2], {}),
    # every configuration gives it: the first one's value is the rebuilt kernel's default
    ("1", "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': 4}), triton.Config({'BLOCK_SIZE': 256, 'UNROLL': 8})]",
     [4, 8], {"UNROLL": 4}),
    # no configuration gives it: the default alone, not a tuned constant
    ("1", "[triton.Config({'BLOCK_SIZE': 128}), triton.Config({'BLOCK_SIZE': 256})]", [], {}),
    # a default of another type than the configurations give (the grader does not say which Triton launches)
    ("None", "[triton.Config({'BLOCK_SIZE': 128}), triton.Config({'BLOCK_SIZE': 256, 'UNROLL': 2})]", [], {}),
])
def test_a_constant_some_configurations_leave_at_its_default_runs_with_the_default_too(tmp_path, course, default,
                                                                                      configs, unrolls, written):
    path = tmp_path / "tuned.py"
    path.write_text(TUNED_ADD.replace("{configs}", configs).replace("UNROLL: tl.constexpr",
                                                                    f"UNROLL: tl.constexpr = {default}"))
    loaded = load_submission(path, course, ["vector_add"])["vector_add"]
    assert loaded.status == "found", loaded.diagnostics
    source = loaded.source
    assert ([source.tuned["UNROLL"]] if source.tuned else []) + [v["UNROLL"] for v in source.variants] == unrolls
    rebuilt = ast.parse(source.modules[MAIN])
    kernel = next(node for node in rebuilt.body if isinstance(node, ast.FunctionDef) and node.name == "add_kernel")
    assert ast.literal_eval(kernel.args.defaults[-1]) == written.get("UNROLL", ast.literal_eval(default))


@pytest.mark.parametrize("configs", [
    "[triton.Config({'BLOCK_SIZE': b, 'UNROLL': 1}) for b in sizes()]",  # a call the grader does not make
    "[triton.Config({'BLOCK_SIZE': 2 ** p, 'UNROLL': 1}) for p in range(10 ** 6)]",  # too many
    "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': 2 ** (10 ** 9)}) for p in [1]]",  # too large a number
    "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': u}) for u in range(2 ** 63)]",  # longer than Python's len()
    "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': u}) for u in SIZES]",  # a list, which may change in place
])
def test_configurations_the_grader_cannot_read_give_no_constants(tmp_path, course, configs):
    path = tmp_path / "tuned.py"
    path.write_text(TUNED_ADD.replace("{configs}", configs).replace(
        "SIZES = (128, 256)", "SIZES = [1, 2]\nSIZES[0] = 3\n\n\ndef sizes():\n    return [128]"))
    loaded = load_submission(path, course, ["vector_add"])["vector_add"]
    assert loaded.status == "error" and "must be written out" in loaded.diagnostics[0].message


@pytest.mark.parametrize("configs", [
    "[triton.Config({'BLOCK_SIZE': b}) for b in sorted(SIZES)]",
    "[triton.Config({'BLOCK_SIZE': b}, num_warps=w) for b, w in itertools.product(SIZES, (4, 8))]",
])
def test_the_blocks_of_configurations_a_kernel_computes_are_run_as_cases(tmp_path, course, grade, configs):
    """Configurations the grader cannot read without running them are evaluated by the sandboxed worker, as the GPU
    stage's compile sandbox evaluates them: a kernel wrong only at their blocks fails there (on an H200 one wrong
    at its only configuration's blocks, computed by itertools.product, was)."""
    path = tmp_path / "vector_add.py"
    path.write_text("import itertools\n" + TUNED_ADD.replace("{configs}", configs)
                    .replace(", UNROLL: tl.constexpr", "").replace("SIZES = (128, 256)", "SIZES = (128, 8192)")
                    .replace("    mask = offsets < n\n", "    mask = offsets < n - (BLOCK_SIZE >= 8192)\n"))
    loaded = load_submission(path, course, ["vector_add"])["vector_add"]
    assert loaded.status == "found" and loaded.source.configs_computed and loaded.source.configured_blocks == ()
    result = grade(path).puzzle("vector_add")
    assert result.status == "fail" and [case.name for case in result.cases if case.status != "pass"] == \
        ["many blocks (blocks BLOCK_SIZE=8192)"], [(case.name, case.status) for case in result.cases]


def test_the_constants_of_configurations_a_kernel_computes_run_as_variants(tmp_path, grade):
    """A computed configuration's value of the kernel's own parameter runs every case as a written one does: unmasked
    loads with MASKED=False fail the ragged rows."""
    path = tmp_path / "row_sum.py"
    path.write_text(textwrap.dedent("""\
        import itertools
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK_N": b, "MASKED": m}, num_warps=4)
                                  for b, m in itertools.product([64, 128], [True, False])], key=["N"])
        @triton.jit
        def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr, MASKED: tl.constexpr = True):
            row = tl.program_id(0)
            partial = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                if MASKED:
                    x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
                else:
                    x = tl.load(x_ptr + row * stride_m + cols * stride_n)
                partial += x.to(tl.float32)
            tl.store(out_ptr + row, tl.sum(partial, axis=0))
        """))
    result = grade(path).puzzle("row_sum")
    assert result.status == "fail"
    assert any("With MASKED=False" in d.message for case in result.cases for d in case.diagnostics), \
        [d.message for case in result.cases for d in case.diagnostics][:3]


def test_a_configuration_list_made_a_billion_times_longer_is_not_made(tmp_path, course):
    """The grader computes configurations in its own process: arithmetic on numbers only, bounded."""
    path = tmp_path / "tuned.py"
    path.write_text(TUNED_ADD.replace("{configs}", "[triton.Config({'BLOCK_SIZE': 128, 'UNROLL': u}) for u in SIZES]")
                    .replace("SIZES = (128, 256)", "SIZES = [1] * 10 ** 9"))
    loaded = load_submission(path, course, ["vector_add"])["vector_add"]
    assert loaded.status == "error" and "must be written out" in loaded.diagnostics[0].message
