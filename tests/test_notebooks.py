"""Each puzzle notebook runs top to bottom in a real Jupyter kernel: the skeleton fails kindly, then the solution
pasted in passes."""
import ast
import html
import os
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from grader.course import with_configuration_cases

from conftest import ROOT, execute_notebook
import yaml

PUZZLES = yaml.safe_load((ROOT / "course.yml").read_text())["puzzles"]

pytestmark = pytest.mark.slow


def without_autotune(source):
    """A solution as a student would paste it: without the GPU stage's @triton.autotune (which the
    interpreter cannot run when the cell calls the kernel with its own block size)."""
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        for decorator in getattr(node, "decorator_list", []):
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "autotune":
                for line in range(decorator.lineno - 1, decorator.end_lineno):
                    lines[line] = ""
    return "\n".join(lines)


@pytest.fixture(scope="module")
def executed():
    """Every puzzle notebook run top to bottom as it is, then, in the same Jupyter kernel as a student who fixes
    the kernel would, its solution pasted into a new cell and every cell after the skeleton run again (their
    copies tagged "solution:<tag>"); two notebooks at a time per core (each kernel waits on its sandboxed
    worker most of the time)."""
    # Parsed here, not in the threads: CPython 3.11 counts the ast module's recursion per interpreter, and two
    # threads parsing at once fail with "AST constructor recursion depth mismatch".
    solutions = [without_autotune((ROOT / puzzle["solution"]).read_text()) for puzzle in PUZZLES]
    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        notebooks = pool.map(lambda item: _execute(item[0], then_solution=item[1]), zip(PUZZLES, solutions))
        return {p["id"]: notebook for p, notebook in zip(PUZZLES, notebooks)}


def _execute(puzzle, solution=None, forward=None, then_solution=None):
    notebook = nbformat.read(ROOT / puzzle["notebook"], as_version=4)
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if solution and "skeleton" in tags:
            cell.source = solution
        if forward and "forward" in tags:
            cell.source = forward
    if then_solution:
        skeleton = next(i for i, c in enumerate(notebook.cells) if "skeleton" in c.metadata.get("tags", []))
        again = [nbformat.v4.new_code_cell(c.source, metadata={"tags": [f"solution:{t}" for t in c.metadata.get(
            "tags", [])]}) for c in notebook.cells[skeleton + 1:] if c.cell_type == "code"]
        notebook.cells += [nbformat.v4.new_code_cell(then_solution, metadata={"tags": ["solution:skeleton"]})] + again
    return execute_notebook(notebook)


def _outputs(notebook, tag):
    [cell] = [c for c in notebook.cells if tag in c.metadata.get("tags", [])]
    return cell.outputs


def _check_report(notebook, run=""):
    """(the HTML report, the line of text) of the check cell (of the solution's run: run="solution:"), which must
    write nothing else."""
    outputs = _outputs(notebook, f"{run}check")
    assert [o.output_type for o in outputs] == ["display_data", "stream"] and outputs[1].name == "stdout", outputs
    return html.unescape(outputs[0].data["text/html"]), outputs[1].text


@pytest.mark.parametrize("puzzle", PUZZLES, ids=[p["id"] for p in PUZZLES])
def test_the_skeleton_runs_and_reports_a_failure(executed, puzzle):
    notebook = executed[puzzle["id"]]
    report, line = _check_report(notebook)
    assert line.startswith(f"{puzzle['id']}: {puzzle['title']} - FAIL")
    assert "Is the kernel body still the skeleton's `pass`?" in report
    assert any("image/png" in o.get("data", {}) for o in _outputs(notebook, "picture"))


@pytest.mark.parametrize("puzzle", PUZZLES, ids=[p["id"] for p in PUZZLES])
def test_the_solution_passes_in_the_notebook(executed, course, puzzle):
    report, line = _check_report(executed[puzzle["id"]], run="solution:")
    assert line.startswith(f"{puzzle['id']}: {puzzle['title']} - PASS, {puzzle['points']}/{puzzle['points']} points")
    # Pasted without its tuning configurations: its cases, and the largest again at the benchmark's default blocks.
    assert report.count(">pass<") == len(with_configuration_cases(course.puzzle(puzzle["id"])).cases)


def test_the_backward_kernels_plug_into_autograd():
    [puzzle] = [p for p in PUZZLES if p["id"] == "softmax_backward"]
    forward = without_autotune((ROOT / "solutions" / "softmax.py").read_text())
    notebook = _execute(puzzle, (ROOT / puzzle["solution"]).read_text(), forward=forward)
    [output] = _outputs(notebook, "autograd")
    difference = float(output.text.split(":")[-1])
    assert difference < 1e-6, output.text


TAUGHT = {
    "vector_add": ["offsets int32[4] [ 8,  9, 10, 11]", "mask int1[4] [True, True, False, False]"],
    "strided_views": ["from the strides: pointer<fp32>[4, 2]", "x_ptr + [[ 0,  1],", "         [ 6,  7],",
                      "(offsets 2, 3, 4, 5 are outside x_ptr: view of shape (4, 2), stride (6, 1))"],
}


@pytest.mark.parametrize("puzzle_id", TAUGHT)
def test_the_notebooks_that_teach_debugging_run_their_example(executed, puzzle_id):
    printed = "".join(o.text for o in _outputs(executed[puzzle_id], "debug") if o.output_type == "stream")
    for line in TAUGHT[puzzle_id]:
        assert line in printed.splitlines(), printed


def test_a_failing_check_gives_the_lines_that_launch_its_case_again(executed):
    report, _ = _check_report(executed["vector_add"])
    assert "Step through it" in report
    assert "x, y, out = case('vector_add', 'ragged tail')\nrun(add_kernel, (4,), x, y, out, 1000, BLOCK_SIZE=256)" \
        in report, "the skeleton stores nothing: no program to blame, the whole launch"
