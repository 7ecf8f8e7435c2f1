"""Each puzzle notebook runs top to bottom in a real Jupyter kernel: the skeleton fails kindly, the solution passes."""
import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT
import yaml

PUZZLES = yaml.safe_load((ROOT / "course.yml").read_text())["puzzles"]

pytestmark = pytest.mark.slow


def _execute(puzzle, solution=None, forward=None):
    notebook = nbformat.read(ROOT / puzzle["notebook"], as_version=4)
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if solution and "skeleton" in tags:
            cell.source = solution
        if forward and "forward" in tags:
            cell.source = forward
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    return notebook


def _outputs(notebook, tag):
    [cell] = [c for c in notebook.cells if tag in c.metadata.get("tags", [])]
    return cell.outputs


@pytest.mark.parametrize("puzzle", PUZZLES, ids=[p["id"] for p in PUZZLES])
def test_the_skeleton_runs_and_reports_a_failure(puzzle):
    notebook = _execute(puzzle)
    outputs = _outputs(notebook, "check")
    assert [o.output_type for o in outputs] == ["stream"] and outputs[0].name == "stdout", outputs
    assert f"{puzzle['id']}: {puzzle['title']} - FAIL" in outputs[0].text
    assert "Is the kernel body still the skeleton's `pass`?" in outputs[0].text
    assert any("image/png" in o.get("data", {}) for o in _outputs(notebook, "picture"))


@pytest.mark.parametrize("puzzle", PUZZLES, ids=[p["id"] for p in PUZZLES])
def test_the_solution_passes_in_the_notebook(puzzle):
    solution = (ROOT / puzzle["solution"]).read_text()
    outputs = _outputs(_execute(puzzle, solution), "check")
    assert [o.output_type for o in outputs] == ["stream"] and outputs[0].name == "stdout", outputs
    assert f"{puzzle['id']}: {puzzle['title']} - PASS, {puzzle['points']}/{puzzle['points']} points" in \
        outputs[0].text


def test_the_backward_kernels_plug_into_autograd():
    [puzzle] = [p for p in PUZZLES if p["id"] == "softmax_backward"]
    forward = (ROOT / "solutions" / "softmax.py").read_text()
    forward = forward[forward.index("@triton.jit"):]  # as a student pastes it: without the GPU stage's autotuning
    notebook = _execute(puzzle, (ROOT / puzzle["solution"]).read_text(), forward=forward)
    [output] = _outputs(notebook, "autograd")
    difference = float(output.text.split(":")[-1])
    assert difference < 1e-6, output.text
