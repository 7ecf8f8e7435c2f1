"""The real nbgrader pipeline on a synthetic class, and `triton-course grade` agreeing with it."""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.classroom.nbgrader import init_course, source_notebook

from conftest import BUGS, ROOT

pytestmark = pytest.mark.slow
SEED = 9173
ASSIGNMENT = {"ps1": ["vector_add", "strided_views"]}
NOTEBOOKS = {"vector_add": "01_vector_add.ipynb", "strided_views": "03_strided_views.ipynb"}


def kernel_of(path):
    text = Path(path).read_text()
    return text[text.index("@triton.jit"):]


SOLUTIONS = {pid: kernel_of(ROOT / "solutions" / f"{pid}.py") for pid in NOTEBOOKS}
ALTERNATIVES = ROOT / "tests" / "alternatives"


def worked_cells(notebook):
    """A student's cells from one of the alternative notebooks (drafts, magics, failing experiments, the final
    kernel), without its check cell: what the student typed into the released notebook."""
    cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
             for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    return [c for c in cells if "check(" not in c and "from grader" not in c]



def duplicate_test_cell(notebook, puzzle_id):
    """A cell of the student's that claims the test cell's grade id, before the real one."""
    test = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
    copy = nbformat.v4.new_code_cell("print('full marks')", metadata={"nbgrader": dict(test.metadata.nbgrader)})
    notebook.cells.insert(1, copy)
    return notebook


def tampered_metadata(notebook, puzzle_id):
    """nbgrader's metadata of an unknown schema in one notebook, a cell claiming the test cell's grade id in the
    other."""
    if puzzle_id == "strided_views":
        return duplicate_test_cell(notebook, puzzle_id)
    for cell in notebook.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata.nbgrader["schema_version"] = 99
    return notebook


def markup(notebook, puzzle_id):
    notebook.cells.insert(1, nbformat.v4.new_markdown_cell(
        "My notes <script>document.title = 'pwned'</script><img src=x onerror=\"document.title = 'pwned'\">"))
    return notebook


def unreadable(notebook, puzzle_id):
    return "{ this is not a notebook" if puzzle_id == "vector_add" else notebook


HOSTILE_CELL = ("import os, shutil, signal\nshutil.rmtree('..', ignore_errors=True)\nos.remove('gradebook.db')\n"
                "os.kill(os.getppid(), signal.SIGKILL)\nos._exit(1)")
# student: (kernel per puzzle or None for the released skeleton, extra cell, expected points per puzzle)
CLASS = {
    "complete": (SOLUTIONS, markup, {"vector_add": 10, "strided_views": 15}),  # with markup in a note of theirs
    "partial": ({"vector_add": SOLUTIONS["vector_add"],
                 "strided_views": kernel_of(BUGS / "strided_views" / "assumes_contiguous.py")}, None,
                {"vector_add": 10, "strided_views": 5}),
    "buggy": ({"vector_add": kernel_of(BUGS / "vector_add" / "less_or_equal.py"),
               "strided_views": kernel_of(BUGS / "strided_views" / "no_mask.py")}, None,
              {"vector_add": 0, "strided_views": 0}),
    "skeleton": ({}, None, {"vector_add": 0, "strided_views": 0}),
    "hostile": (SOLUTIONS, HOSTILE_CELL, {"vector_add": 10, "strided_views": 15}),
    # Kernels written other ways: the tutorial's vector add pasted in; a student's drafts, magics (%%time) and
    # failing cells typed into the notebook around the kernel that counts.
    "other_styles": ({"vector_add": (ALTERNATIVES / "vector_add" / "tutorial_01_vector_add.py").read_text(),
                      "strided_views": worked_cells(ALTERNATIVES / "strided_views" /
                                                    "student_notebook_strided.ipynb")}, None,
                     {"vector_add": 10, "strided_views": 15}),
    # Notebooks that are one student's problem only: the rest of the class is graded after them.
    "tampered_metadata": (SOLUTIONS, tampered_metadata, {"vector_add": 10, "strided_views": 15}),
    "unreadable_notebook": (SOLUTIONS, unreadable, {"vector_add": 0, "strided_views": 15}),
}


def nbgrader(course_dir, *args):
    # nbgrader runs the `alembic` command of its environment to create the gradebook: the venv's bin on PATH.
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    result = subprocess.run([str(Path(bin_dir) / "nbgrader"), *args], cwd=course_dir, capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def submitted_class(course, tmp_path_factory):
    """A course directory with the assignment released and CLASS's notebooks submitted."""
    course_dir = tmp_path_factory.mktemp("nbgrader-course")
    init_course(course_dir, course, ASSIGNMENT, SEED)
    nbgrader(course_dir, "generate_assignment", "ps1")
    for student, (kernels, extra, _) in CLASS.items():
        target = course_dir / "submitted" / student / "ps1"
        target.mkdir(parents=True)
        for puzzle_id, name in NOTEBOOKS.items():
            notebook = nbformat.read(course_dir / "release" / "ps1" / name, as_version=4)
            for index, cell in enumerate(list(notebook.cells)):
                if cell.metadata.get("nbgrader", {}).get("grade_id") == f"kernel_{puzzle_id}" and puzzle_id in kernels:
                    worked = kernels[puzzle_id] if isinstance(kernels[puzzle_id], list) else [kernels[puzzle_id]]
                    cell.source = worked[-1]  # the last cell the student ran defines the kernel graded
                    notebook.cells[index:index] = [nbformat.v4.new_code_cell(c) for c in worked[:-1]]
            if isinstance(extra, str):
                notebook.cells.insert(1, nbformat.v4.new_code_cell(extra))
            elif extra:
                notebook = extra(notebook, puzzle_id)
            if isinstance(notebook, str):
                (target / name).write_text(notebook)
            else:
                nbformat.write(notebook, target / name)
    return course_dir


@pytest.fixture(scope="module")
def graded_class(submitted_class, tmp_path_factory):
    course_dir = tmp_path_factory.mktemp("nbgrader") / "course"
    shutil.copytree(submitted_class, course_dir)
    nbgrader(course_dir, "autograde", "ps1")
    nbgrader(course_dir, "generate_feedback", "ps1")
    nbgrader(course_dir, "export")
    return course_dir


@pytest.fixture(scope="module")
def graded_in_parallel(submitted_class, tmp_path_factory):
    """The same class through `triton-course nbgrader autograde`: kernels graded on Dask, then nbgrader's own
    autograde in two processes."""
    course_dir = tmp_path_factory.mktemp("nbgrader-parallel") / "course"
    shutil.copytree(submitted_class, course_dir)
    result = subprocess.run([sys.executable, "-m", "grader.cli", "nbgrader", "autograde", "ps1", "--jobs", "2"],
                            cwd=course_dir, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(CLASS)} students autograded" in result.stdout
    nbgrader(course_dir, "generate_feedback", "ps1")
    nbgrader(course_dir, "export")
    return course_dir


def test_every_student_gets_the_expected_score(graded_class):
    with open(graded_class / "grades.csv") as handle:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}
    assert scores == {student: float(sum(points.values())) for student, (_, _, points) in CLASS.items()}
    assert (graded_class / "gradebook.db").exists(), "the hostile student's cell never ran"


def test_feedback_exists_and_hides_the_hidden_cases(graded_class):
    for student in CLASS:
        for name in NOTEBOOKS.values():
            html = (graded_class / "feedback" / student / "ps1" / name.replace(".ipynb", ".html")).read_text()
            if student == "skeleton":
                assert "This is still the skeleton" in html
            elif student == "unreadable_notebook" and name == NOTEBOOKS["vector_add"]:
                assert "This notebook could not be read, so it was graded 0" in html and "JSONDecodeError" in html
            else:
                assert "hidden case 1" in html
            assert str(SEED) not in html and "hidden_seed" not in html and "course.yml" not in html
    markup = (graded_class / "feedback" / "complete" / "ps1" / "01_vector_add.html").read_text()
    notes = markup[markup.index("My notes"):][:300]  # the student's markup, shown as text
    assert "&lt;script&gt;" in notes and "<script" not in notes and "<img" not in notes
    partial = (graded_class / "feedback" / "partial" / "ps1" / "03_strided_views.html").read_text()
    assert "Every contiguous case passes but these layouts fail" in partial


def test_the_release_hides_the_solution_and_keeps_the_test_cell_locked(graded_class, course):
    released = nbformat.read(graded_class / "release" / "ps1" / "01_vector_add.ipynb", as_version=4)
    kernel = next(c for c in released.cells if c.metadata.get("nbgrader", {}).get("solution"))
    assert "raise NotImplementedError()" in kernel.source and "tl.load" not in kernel.source
    test = next(c for c in released.cells if c.metadata.get("nbgrader", {}).get("grade"))
    assert test.source == 'grade("vector_add", add_kernel)'
    assert test.metadata.nbgrader["locked"] and test.metadata.nbgrader["points"] == 10
    source = source_notebook(course.puzzle("vector_add"))
    assert "### BEGIN SOLUTION" in next(c.source for c in source.cells if "skeleton" in c.metadata.get("tags", []))


def test_triton_course_grade_agrees_with_nbgrader(graded_class, tmp_path):
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "grader.cli", "grade", str(graded_class / "submitted"), "--out", str(out),
               "--assignment", "ps1", "--hidden-seed", str(SEED), "--puzzle", "vector_add", "--puzzle", "strided_views"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    with open(out) as handle:
        ours = {row["student"]: float(row["points"]) for row in csv.DictReader(handle)}
    with open(graded_class / "grades.csv") as handle:
        theirs = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}
    assert ours == theirs
    report = json.loads((tmp_path / "grades_feedback" / "partial.json").read_text())
    assert [p["points"] for p in report["puzzles"]] == [10, 5]


def test_parallel_autograde_gives_nbgraders_grades_outputs_and_feedback(graded_class, graded_in_parallel):
    # The same rows; in the order the gradebook got its students, which the parallel processes change.
    ours, theirs = ((course / "grades.csv").read_text().splitlines() for course in (graded_in_parallel, graded_class))
    assert ours[0] == theirs[0] and sorted(ours) == sorted(theirs)
    for student in CLASS:
        for name in NOTEBOOKS.values():
            ours, theirs = (nbformat.read(course / "autograded" / student / "ps1" / name, as_version=4)
                            if (course / "autograded" / student / "ps1" / name).exists() else None
                            for course in (graded_in_parallel, graded_class))
            assert (ours is None) == (theirs is None)
            if ours is not None:
                assert [c.get("outputs") for c in ours.cells] == [c.get("outputs") for c in theirs.cells], student
            feedback = Path("feedback") / student / "ps1" / name.replace(".ipynb", ".html")
            assert (graded_in_parallel / feedback).exists() == (graded_class / feedback).exists()


def test_parallel_autograde_grades_each_kernel_ahead_once(graded_in_parallel):
    logs = "".join(p.read_text() for p in (graded_in_parallel / "autograde_logs").glob("*.log"))
    ahead = {line.split()[-4] for line in logs.splitlines() if line.endswith("was graded ahead")}
    here = {line.split()[-7] for line in logs.splitlines() if "it was not graded ahead" in line}
    # A student whose cells nbgrader restores or repairs the way we read them is graded ahead; the others
    # (the duplicated test cell, the unreadable notebook) by nbgrader's own step, as in a plain autograde.
    for student in ("complete", "partial", "buggy", "hostile", "other_styles"):
        assert {f"{student}/ps1/{Path(name).stem}" for name in NOTEBOOKS.values()} <= ahead, student
    assert not ahead & here
