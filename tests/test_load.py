"""Submissions load from .py files, notebooks and directories; each problem gets its own verdict."""
import pytest

from grader.pipeline.grade import grade_submission
from grader.pipeline.load import SubmissionError
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


def test_an_unknown_puzzle_is_unusable(grade):
    with pytest.raises(SubmissionError, match="no puzzle 'nope'"):
        grade(ROOT / "solutions", puzzle="nope")


def test_a_kernel_that_never_ends_costs_only_its_own_puzzle(course, tmp_path):
    (tmp_path / "vector_add.py").write_text(SOLUTION.replace(
        "    pid = tl.program_id(axis=0)", "    pid = tl.program_id(axis=0)\n    while pid >= 0:\n        pid += 0"))
    (tmp_path / "outer_add.py").write_text((ROOT / "solutions" / "outer_add.py").read_text())
    report = grade_submission(course, tmp_path, ["vector_add", "outer_add"], settings=Settings(puzzle_timeout_s=20))
    vector_add, outer_add = report.puzzles
    assert vector_add.status == "error" and vector_add.diagnostics[0].kind == "timeout"
    assert "no result after 20 s" in vector_add.diagnostics[0].message
    assert outer_add.status == "pass"
