"""The course itself: every solution passes, every skeleton fails, every catalogued bug is caught as expected."""
import ast
import importlib.util
import json

import pytest
import yaml

from conftest import ROOT, catalogued_bugs, grade_files

BUGS = catalogued_bugs()
PUZZLES = [p["id"] for p in yaml.safe_load((ROOT / "course.yml").read_text())["puzzles"]]


def _cells(notebook_path, tag):
    notebook = json.loads(notebook_path.read_text())
    return [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for c in notebook["cells"] if tag in c.get("metadata", {}).get("tags", [])]


@pytest.fixture(scope="session")
def skeletons(course, tmp_path_factory):
    directory = tmp_path_factory.mktemp("skeletons")
    files = {}
    for puzzle in course.puzzles:
        [skeleton] = _cells(puzzle.notebook, "skeleton")
        path = directory / f"{puzzle.id}.py"
        path.write_text("import triton\nimport triton.language as tl\n\n" + skeleton)
        files[puzzle.id] = (puzzle.id, path)
    return grade_files(course, files)


@pytest.fixture(scope="session")
def bugs(course):
    return grade_files(course, {f"{puzzle_id}--{path.stem}": (puzzle_id, path) for puzzle_id, path, _ in BUGS})


def test_the_solutions_compile_for_every_target(solutions):
    """Every reference solution passes the compile check for sm_80 and sm_90 (here, where the solutions are
    graded anyway: a session fixture is graded once per pytest process that asks for it)."""
    assert not [d.message for result in solutions.values() for d in result.diagnostics if d.kind == "compile"]


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_the_solution_passes(course, solutions, puzzle_id):
    result = solutions[puzzle_id]
    assert result.status == "pass", [d.message for d in result.diagnostics]
    assert result.points == course.puzzle(puzzle_id).points


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_the_skeleton_fails_with_a_friendly_diagnostic(skeletons, puzzle_id):
    result = skeletons[puzzle_id]
    assert result.status == "fail"
    assert result.kinds == {"unwritten_output"}
    assert "stored nothing at all" in result.diagnostics[0].message


@pytest.mark.parametrize("puzzle_id,path,expected", BUGS, ids=[f"{b[0]}/{b[1].stem}" for b in BUGS])
def test_each_catalogued_bug_is_caught_with_its_diagnostic(bugs, puzzle_id, path, expected):
    result = bugs[f"{puzzle_id}--{path.stem}"]
    assert result.status == "fail" and result.points < result.max_points
    assert expected in result.kinds, [(d.kind, d.message) for d in result.diagnostics]


def test_a_host_function_called_in_a_kernel_is_told_its_kernels_counterpart(bugs):
    """Triton's own message asks whether @triton.jit was forgotten: on triton.cdiv it was not."""
    message = bugs["vector_add--host_cdiv_in_kernel"].diagnostics[0].message
    assert "triton.cdiv(n_elements, BLOCK_SIZE)" in message and "In a kernel use tl.cdiv" in message


def test_only_the_bugs_that_read_their_output_before_storing_it_are_told_so(bugs):
    """A store is not a read: a kernel that only stores wrong values into its output gets no read_before_write
    (every failing output got one when stores were counted as reads). Nor does a read whose value the kernel
    never uses (its case run again with other garbage in the output stores the same values); a kernel whose
    values depend on what the output held gets it, even where they come out right over the grader's NaN."""
    readers = {"row_sum--atomic_add_into_output",  # atomic_add into the output
               "vector_add--keeps_what_the_output_held",  # right over NaN, wrong over other garbage
               "vector_add--keeps_the_output_and_fails_elsewhere",  # fails over other garbage
               "vector_add--keeps_zeros_in_the_output",  # wrong over zeros
               "vector_add--keeps_huge_values_in_the_output",  # wrong over large garbage
               "vector_add--keeps_a_zeroed_block"}  # wrong over zeroed memory
    # (vector_add--order_dependent adds into its output before program 0 clears it, in the shuffled case, but
    # program 0's store then wipes what it added over either garbage: the race is what it is told.)
    told = {key for key, result in bugs.items()
            if "read_before_write" in {d.kind for d in result.diagnostics} | {d.kind for c in result.cases
                                                                               for d in c.diagnostics}}
    assert told == readers


def test_the_catalogue_covers_every_puzzle():
    assert {puzzle_id for puzzle_id, _, _ in BUGS} == set(PUZZLES)


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_the_notebook_is_in_sync_with_the_course(course, puzzle_id):
    puzzle = course.puzzle(puzzle_id)
    notebook = json.loads(puzzle.notebook.read_text())
    code_cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code_cells), "notebooks carry no outputs"
    [reference] = _cells(puzzle.notebook, "reference")
    assert reference.strip() == puzzle.reference_source.strip(), "the reference cell must be course.yml's reference"
    [skeleton] = _cells(puzzle.notebook, "skeleton")
    [kernel] = [node for node in ast.parse(skeleton).body if isinstance(node, ast.FunctionDef)]
    assert kernel.name == puzzle.kernel
    assert [a.arg for a in kernel.args.args] == list(puzzle.params)
    assert [a.arg for a in kernel.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)] \
        == list(puzzle.constexprs)
    [check] = _cells(puzzle.notebook, "check")
    assert f'check("{puzzle.id}", {puzzle.kernel})' in check
    [setup] = _cells(puzzle.notebook, "setup")
    assert setup.index('os.environ["TRITON_INTERPRET"] = "1"') < setup.index("import triton")


@pytest.mark.parametrize("puzzle_id,path,expected", BUGS, ids=[f"{b[0]}/{b[1].stem}" for b in BUGS])
def test_a_failing_case_is_launched_again_by_the_lines_its_report_gives(bugs, puzzle_id, path, expected, capsys):
    """The report's two lines (case() and run()) run as given, next to the student's kernel, and an out-of-bounds
    access stops again in the program the report named."""
    from grader.notebook import case, run
    result = bugs[f"{puzzle_id}--{path.stem}"]
    failing = [c for c in result.cases if c.status != "pass"]
    if not failing:  # refused before any case ran: nothing to launch
        assert result.kinds <= {"compile", "load_error"}
        return
    first = failing[0]
    assert first.replay, f"{first.name}: no lines to launch it again"
    spec = importlib.util.spec_from_file_location(f"bug_{puzzle_id}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    namespace = {**vars(module), "case": case, "run": run}
    unpack, launch = first.replay.splitlines()
    exec(unpack, namespace)
    capsys.readouterr()
    completed = eval(launch, namespace)
    [diagnostic] = [d for d in first.diagnostics if d.kind == first.diagnostics[0].kind][:1]
    if diagnostic.kind == "undefined_lanes":  # the lanes hold 0 in the run that went wrong, and in its replay
        assert "zero_undefined=True" in launch
    if diagnostic.kind == "out_of_bounds":
        assert completed is False
        message = diagnostic.message  # after what says which tuning configuration's constants the run took
        program = (message.split("): ", 1)[1] if message.startswith("With ") else message).split(":")[0]
        assert f"stopped before an out-of-bounds access: {program}:" in capsys.readouterr().out
    elif diagnostic.program is not None:
        assert "programs=[" in launch, "the program the diagnostic blames is the one launched"
