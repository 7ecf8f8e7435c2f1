"""Correct kernels written the ways Triton programmers write them (tests/alternatives/<puzzle>/) all pass,
with the same verdict through every entry point: the notebook's check(), the command line and nbgrader.

Each alternative is checked against PyTorch outside the grader by tests/alternatives/against_pytorch.py
(Triton's own interpreter, none of the grader's code; test_alternatives_against_pytorch.py). Here: the three entry points load the very same kernel
module from it, and graded with the instructor's hidden cases (which include every public case) it passes.
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from grader.classroom.nbgrader import source_notebook
from grader.pipeline.load import load_submission

from conftest import ROOT, execute_notebook, grade_files, in_parallel

ALTERNATIVES_DIR = ROOT / "tests" / "alternatives"
ALTERNATIVES = sorted(p for p in ALTERNATIVES_DIR.glob("*/*") if p.suffix in (".py", ".ipynb"))
HIDDEN_SEED = 20261123


def puzzle_of(path):
    return path.parent.name


def test_the_corpus_covers_every_puzzle_in_many_styles(course):
    assert len(ALTERNATIVES) >= 100
    for puzzle in course.puzzles:
        assert len([p for p in ALTERNATIVES if puzzle_of(p) == puzzle.id]) >= 6, puzzle.id
    assert len([p for p in ALTERNATIVES if p.suffix == ".ipynb"]) >= 4
    tutorials = {puzzle_of(p) for p in ALTERNATIVES if "tutorial" in p.stem}
    assert {"vector_add", "softmax", "matmul", "layer_norm", "attention"} <= tutorials


LIVE = r'''
import ast, contextlib, io, json, os, sys
from pathlib import Path
os.environ["TRITON_INTERPRET"] = "1"  # as a puzzle notebook's first cell sets it
import types, torch, triton
# Some alternatives choose their configurations by asking the driver, which a machine without a GPU lacks.
driver = types.SimpleNamespace(get_active_torch_device=lambda: torch.device("cpu"),
                               get_current_target=lambda: types.SimpleNamespace(backend="cuda", arch=90))
type(triton.runtime.driver).active = property(lambda self: driver)
from IPython.core.interactiveshell import InteractiveShell
from grader.course import load_course
from grader.pipeline.load import load_live
course = load_course()
found = {}
for path in sys.argv[1:]:
    path = Path(path)
    puzzle = course.puzzle(path.parent.name)
    if path.suffix == ".py":  # imported statement by statement: its host code may need a GPU this machine lacks
        namespace = {"__name__": f"alternative_{len(found)}", "__file__": str(path)}
        for statement in ast.parse(path.read_text()).body:
            try:
                exec(compile(ast.Module([statement], []), str(path), "exec"), namespace)
            except Exception:
                pass
        kernel = namespace[puzzle.kernel]
    else:
        InteractiveShell.clear_instance()
        shell = InteractiveShell.instance()
        name = puzzle.kernel
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] != "code":
                continue
            if "check(" in source:  # the check cell: check() is what loads the kernel, below
                name = source.split("check(")[1].split(",")[1].strip(" )\n")
                continue
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                shell.run_cell(source, store_history=True)
        kernel = shell.user_ns[name]
    loaded = load_live(kernel, puzzle)
    found[str(path)] = {"status": loaded.status, "messages": [d.message for d in loaded.diagnostics],
                        "modules": loaded.source.modules if loaded.source else None}
print(json.dumps(found))
'''


@pytest.fixture(scope="module")
def live_sources(tmp_path_factory):
    """What check() loads from each alternative, in a Python that defined it as a student's session does:
    importing the .py file, or running the notebook's cells in IPython."""
    env = {**os.environ, "IPYTHONDIR": str(tmp_path_factory.mktemp("ipython"))}
    found = {}
    for result, _ in in_parallel([sys.executable, "-c", LIVE], ALTERNATIVES, env):
        assert result.returncode == 0, result.stderr[-5000:]
        found.update(json.loads(result.stdout.strip().splitlines()[-1]))
    return found


def nbgrader_submission(course, path, directory):
    """The notebook nbgrader autogrades: the puzzle's released notebook with the alternative pasted into its
    solution cell, or the alternative notebook itself."""
    if path.suffix == ".ipynb":
        return path
    puzzle = course.puzzle(puzzle_of(path))
    notebook = source_notebook(puzzle)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = path.read_text()
    target = Path(directory) / puzzle.notebook.name
    nbformat.write(notebook, target)
    return target


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[f"{puzzle_of(p)}/{p.name}" for p in ALTERNATIVES])
def test_every_entry_point_loads_the_same_kernel(course, live_sources, path):
    puzzle_id = puzzle_of(path)
    cli = load_submission(path, course, [puzzle_id])[puzzle_id]
    assert cli.status == "found", [d.message for d in cli.diagnostics]
    with tempfile.TemporaryDirectory() as directory:
        notebook = nbgrader_submission(course, path, directory)
        nbgrader = load_submission(notebook, course, [puzzle_id], modules_from=notebook.parent)[puzzle_id]
    live = live_sources[str(path)]
    assert live["status"] == "found", live["messages"]
    assert nbgrader.status == "found", [d.message for d in nbgrader.diagnostics]
    assert cli.source.modules == nbgrader.source.modules == live["modules"]


@pytest.fixture(scope="module")
def verdicts(course):
    """Every alternative graded once, with the hidden cases nbgrader's seed adds to the public ones."""
    return grade_files(course, {str(p): (puzzle_of(p), p) for p in ALTERNATIVES}, hidden_seed=HIDDEN_SEED)


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[f"{puzzle_of(p)}/{p.name}" for p in ALTERNATIVES])
def test_every_alternative_passes_the_public_and_the_hidden_cases(course, verdicts, path):
    result = verdicts[str(path)]
    public = len(course.puzzle(puzzle_of(path)).cases)
    assert [c.status for c in result.cases[:public]] == ["pass"] * public, [
        (c.name, [d.message for d in c.diagnostics]) for c in result.cases if c.status != "pass"] or [
        d.message for d in result.diagnostics]
    assert result.status == "pass" and result.points == result.max_points, [
        (c.name, [d.message for d in c.diagnostics]) for c in result.cases if c.status != "pass"]


@pytest.mark.slow
def test_the_notebooks_pass_their_own_check_cell_in_jupyter():
    """The alternative notebooks run top to bottom in a real Jupyter kernel, failing cells and all, and the
    check() in their last cell says PASS: the same verdict as the command line and nbgrader (tested above and
    in test_nbgrader.py)."""
    from concurrent.futures import ThreadPoolExecutor

    def run(path):
        notebook = execute_notebook(nbformat.read(path, as_version=4), allow_errors=True)
        [check] = [cell for cell in notebook.cells if cell.cell_type == "code" and "check(" in cell.source]
        return "".join(output.get("text", "") for output in check.outputs if output.output_type == "stream")

    notebooks = [p for p in ALTERNATIVES if p.suffix == ".ipynb"]
    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        printed = dict(zip(notebooks, pool.map(run, notebooks)))
    for path, text in printed.items():
        puzzle = puzzle_of(path)
        assert text.startswith(f"{puzzle}: ") and " - PASS, " in text.splitlines()[0], (path.name, text[-2000:])
