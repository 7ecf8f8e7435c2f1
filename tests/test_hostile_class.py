"""A class with attackers in it: every entry of the class folder is one row of the CSV, the honest students
are graded right, and nothing an attacker submits (a parser bomb, a FIFO, a name that is a formula, a worker's
forged result) stops the run, reaches another student's row or leaks the hidden cases."""
import csv
import json
import os
import re
import time
from pathlib import Path

import pytest
import torch

import grader.pipeline.grade as grade_module
import grader.pipeline.sandbox as sandbox
from grader.classroom.batch import grade_class, spreadsheet_safe, students
from grader.course import with_hidden_cases
from grader.gpu.leaderboard import ResultsError, load_results, write_leaderboard
from grader.pipeline.load import MAIN, KernelSource
from grader.pipeline.results import printable
from grader.settings import Settings

from conftest import BUGS, ROOT, write_notebook

SOLUTION = (ROOT / "solutions" / "vector_add.py").read_text()
NO_MASK = (BUGS / "vector_add" / "no_mask.py").read_text()
DEEP = ".".join(["triton"] * 600)


def _text(content):
    return lambda path: path.write_text(content)


def _folder(content):
    def make(path):
        path.mkdir()
        (path / "vector_add.py").write_text(content)
    return make


def _notebook(*cells):
    return lambda path: write_notebook(path, cells)


def _symlink(target):
    return lambda path: os.symlink(target, path)


def _surrogate_cell(path):
    write_notebook(path, ["x = 'PLACE'", SOLUTION])
    path.write_text(path.read_text().replace("PLACE", "\\ud800"))  # a lone surrogate, as JSON allows


def _undecodable_folder(path):
    folder = os.fsencode(path.parent) + b"/caf\xe9"
    os.mkdir(folder)
    with open(folder + b"/vector_add.py", "w") as handle:
        handle.write(SOLUTION)


def _undecodable_file_inside(path):
    path.mkdir()
    with open(os.fsencode(path) + b"/kern\xffel.py", "w") as handle:
        handle.write(SOLUTION)


# entry name: (how it is made, points, what its feedback or CSV error says). The honest students first.
CLASS = {
    "ada.py": (_text(SOLUTION), 10, None),
    "bob.py": (_text(NO_MASK), 0, "out_of_bounds"),
    "cy": (_folder(SOLUTION), 10, None),
    "dee.ipynb": (_notebook(SOLUTION), 10, None),
    # parser and size bombs
    "sum_of_100k_terms.py": (_text("x = " + "+".join(["1"] * 100_000) + "\n" + SOLUTION), 0,
                             "too deeply nested or too large for Python's parser"),
    "100k_unary_minus.py": (_text("x = " + "-" * 100_000 + "1\n" + SOLUTION), 0, "Python's parser"),
    "deep_json.ipynb": (_text("[" * 100_000 + "]" * 100_000), 0, "its JSON is nested too deeply"),
    "lone_surrogate.ipynb": (_surrogate_cell, 10, None),
    "config_key_is_a_list.py": (_text(SOLUTION + "\nGPU_CONFIGS = [triton.Config({[1]: 2})]\n"), 10, None),
    "deep_attribute_chain.py": (_text(SOLUTION.replace("@triton.jit", "@triton.autotune(configs=[triton.Config("
                                                       f"{{'BLOCK_SIZE': {DEEP}}})], key=[])\n@triton.jit")),
                                0, "nests more than 200 levels deep"),
    "megabytes_of_x_equals_1.py": (_text("x = 1\n" * 400_000 + SOLUTION), 0, "is larger than 256 KiB"),
    # file system entries
    "dev_zero.py": (_symlink("/dev/zero"), 0, "is a symbolic link"),
    "fifo.py": (lambda path: os.mkfifo(path), 0, "is a FIFO"),
    "loop.py": (_symlink("loop.py"), 0, "is a symbolic link"),
    "link_to_cy": (_symlink("cy"), 0, "is a symbolic link"),
    "caf\udce9": (_undecodable_folder, 10, None),
    "undecodable_inside": (_undecodable_file_inside, 10, None),
    "notes.txt": (_text("not a submission"), 0, "expected a .py file, a .ipynb notebook or a directory"),
    # names others open
    "=HYPERLINK(\"evil.example\",\"x\").py": (_text(SOLUTION), 10, None),
    "+1+1.py": (_text(SOLUTION), 10, None),
    "-2.py": (_text(NO_MASK), 0, "out_of_bounds"),
    "@SUM(1).py": (_text(SOLUTION), 10, None),
    "eve\nTotal: 10 of 10 points.py": (_text(NO_MASK), 0, "out_of_bounds"),
    "escapes.py": (_text(SOLUTION.replace("    pid = tl.program_id(axis=0)\n",
                                          "    tl.static_assert(BLOCK_SIZE < 0, '\\x1b[2J\\x1b[31mgone')\n"
                                          "    pid = tl.program_id(axis=0)\n")), 0, "\\x1b[2J"),
    # a file and a folder of one name: two students
    "alice.py": (_text(SOLUTION), 10, None),
    "alice": (_folder(NO_MASK), 0, "out_of_bounds"),
}
# The id each entry gets in the CSV.
IDS = {name: printable(name if name in ("alice.py", "alice") else name.removesuffix(".py").removesuffix(".ipynb"))
       for name in CLASS}


def make_class(directory):
    directory.mkdir()
    for name, (make, _, _) in CLASS.items():
        make(directory / name)


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module", params=["bubblewrap", "resource limits only"])
def graded_class(request, course, tmp_path_factory):
    if request.param == "bubblewrap" and sandbox.sandbox_kind() != "bubblewrap":
        pytest.skip("bubblewrap is not installed here (apt-get install bubblewrap)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sandbox, "_SANDBOX", request.param)
        root = tmp_path_factory.mktemp("class")
        make_class(root / "submissions")
        started = time.monotonic()
        grade_class(course, root / "submissions", root / "grades.csv", ["vector_add"], progress=None)
        yield root, time.monotonic() - started, patch


def test_the_class_is_large_enough():
    assert len(CLASS) >= 8 and sum(points for _, points, _ in CLASS.values()) >= 40


def test_every_entry_is_one_row_with_its_verdict(graded_class):
    root, seconds, _ = graded_class
    rows = read_csv(root / "grades.csv")
    assert [row["student"] for row in rows] == [spreadsheet_safe(student) for student, _ in
                                                students(root / "submissions")]
    assert len(rows) == len(CLASS), "every entry of the class folder is one row"
    by_student = {row["student"]: row for row in rows}
    feedback = root / "grades_feedback"
    for name, (_, points, evidence) in CLASS.items():
        row = by_student[spreadsheet_safe(IDS[name])]
        assert float(row["points"]) == points, (name, row)
        if evidence:
            said = row["error"] or (feedback / f"{IDS[name]}.txt").read_text()
            assert evidence in said, (name, said)
    assert seconds < 300


def test_names_are_text_in_a_spreadsheet_and_in_the_feedback(graded_class):
    root, _, _ = graded_class
    raw = (root / "grades.csv").read_text()
    for row in read_csv(root / "grades.csv"):
        assert row["student"][:1] not in "=+-@", row["student"]
        assert all(c.isprintable() for c in row["student"])
    assert "'=HYPERLINK(" in raw and "'+1+1," in raw and "'-2," in raw and "'@SUM(1)," in raw
    eve = root / "grades_feedback" / f"{IDS['eve' + chr(10) + 'Total: 10 of 10 points.py']}.txt"
    totals = [line for line in eve.read_text().splitlines() if line.startswith("Total:")]
    assert totals == ["Total: 0/10 points"], "a name cannot forge the total line"


def test_what_a_kernel_or_the_compiler_says_reaches_no_terminal_raw(graded_class):
    root, _, _ = graded_class
    for path in (root / "grades_feedback").iterdir():
        text = path.read_text()
        assert "\x1b" not in text and "\r" not in text, path.name
    assert "\\x1b[2J" in (root / "grades_feedback" / "escapes.txt").read_text()


def test_an_interrupted_run_resumes_to_the_same_csv(graded_class, course):
    root, _, patch = graded_class
    first = (root / "grades.csv").read_bytes()
    feedback = root / "grades_feedback"
    for name in ("bob.py", "fifo.py", "escapes.py", "alice"):  # as if the run had stopped before them
        (feedback / f"{IDS[name]}.json").unlink()
    graded = []
    original = grade_module.grade_read
    patch.setattr("grader.classroom.cluster.grade_read", lambda course, submission, *a, **k:
                  graded.append(submission.path.name) or original(course, submission, *a, **k))
    grade_class(course, root / "submissions", root / "grades.csv", ["vector_add"], progress=None)
    assert sorted(graded) == sorted(["bob.py", "fifo.py", "escapes.py", "alice"])
    assert (root / "grades.csv").read_bytes() == first


def test_the_graders_own_failure_on_one_student_is_that_students_row(course, tmp_path, monkeypatch):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for name in ("ada", "bob", "cy"):
        (submissions / f"{name}.py").write_text(SOLUTION)
    original = grade_module.grade_read

    def fails_on_bob(course, submission, *args, **kwargs):
        if submission.path.stem == "bob":
            raise RecursionError("maximum recursion depth exceeded")
        return original(course, submission, *args, **kwargs)
    monkeypatch.setattr("grader.classroom.cluster.grade_read", fails_on_bob)
    grade_class(course, submissions, tmp_path / "grades.csv", ["vector_add"], progress=None)
    rows = {row["student"]: row for row in read_csv(tmp_path / "grades.csv")}
    assert {s: float(r["points"]) for s, r in rows.items()} == {"ada": 10, "bob": 0, "cy": 10}
    assert "the grader failed on this submission (RecursionError" in rows["bob"]["error"]


def test_hidden_cases_say_what_failed_and_nothing_of_their_sizes(course, tmp_path):
    """A hidden case's feedback gives the kind of failure, no count, index, program or printed value from which
    its sizes (and the instructor's seed) could be found."""
    path = tmp_path / "bug.py"
    path.write_text(NO_MASK.replace("    tl.store(", "    tl.device_print('n', n_elements)\n    tl.store("))
    report = grade_module.grade_submission(course, path, ["vector_add"], hidden_seed=4321)
    hidden = [case for case in report.puzzles[0].cases if case.name.startswith("hidden") and case.status == "fail"]
    assert hidden
    for case in hidden:
        assert case.description == ""
        for diagnostic in case.diagnostics:
            assert diagnostic.kind == "out_of_bounds"
            assert not re.search(r"\d", diagnostic.message), diagnostic.message
    public = [case for case in report.puzzles[0].cases if not case.name.startswith("hidden")]
    assert "elements" in public[0].diagnostics[0].message, "public cases keep their full report"
    sizes = {str(spec.symbols["N"]) for spec in with_hidden_cases(course.puzzle("vector_add"), 4321).cases
             if spec.hidden and spec.symbols["N"] >= 100} - {str(spec.symbols["N"]) for spec in course.puzzle(
                 "vector_add").cases}
    # A public case's own report may hold any number of its own (its offsets 1000, 1001, ...): what else the report
    # says must not hold a hidden size.
    public_messages = {d.message for case in public for d in case.diagnostics}
    text = json.dumps(report.to_dict())
    for message in public_messages:
        text = text.replace(json.dumps(message)[1:-1], "")
    assert sizes and not any(re.search(rf"\b{size}\b", text) for size in sizes)


PUBLIC_SIZES = "((1000,), (1,), (100,), (2048,), (5003,), (777,))"


def test_a_heuristic_that_fails_on_a_hidden_case_tells_nothing_of_it(course, tmp_path):
    """A heuristic that raises with the hidden case's sizes in its message: it ran outside any handler, and the
    worker's traceback reached the feedback."""
    failing = "int('sizes ' + str(tuple(args['x_ptr'].shape)) + ' and ' + str(args['n_elements']))"
    path = tmp_path / "leak.py"
    path.write_text(SOLUTION.replace("@triton.jit", (
        f"@triton.heuristics({{'LEAK': lambda args: 0 if (args['n_elements'],) in {PUBLIC_SIZES} else {failing}}})\n"
        "@triton.jit")).replace("BLOCK_SIZE: tl.constexpr)", "BLOCK_SIZE: tl.constexpr, LEAK: tl.constexpr)"))
    report = grade_module.grade_submission(course, path, ["vector_add"], hidden_seed=4321)
    sizes = {str(spec.symbols["N"]) for spec in with_hidden_cases(course.puzzle("vector_add"), 4321).cases
             if spec.hidden and spec.symbols["N"] >= 100} - {str(spec.symbols["N"]) for spec in course.puzzle(
                 "vector_add").cases}
    text = json.dumps(report.to_dict())
    assert report.puzzles[0].status != "pass"
    assert sizes and not any(re.search(rf"\b{size}\b", text) for size in sizes), text


def test_what_a_worker_printed_as_it_died_is_withheld_where_hidden_cases_ran(course):
    """However the worker dies, its last words may come from a hidden case: with hidden cases among its cases the
    student reads that it died, not what it printed."""
    puzzle = course.puzzle("vector_add")
    ending = sandbox.Ending("crash", "the worker exited with code 1\nValueError: N=31337")
    public = grade_module._verdict(puzzle, None, [], ending, 0, Settings(), (), None, False)
    hidden = grade_module._verdict(with_hidden_cases(puzzle, 4321), None, [], ending, 0, Settings(), (), None, False)
    assert "N=31337" in public.diagnostics[0].message
    assert "N=31337" not in hidden.diagnostics[0].message
    assert hidden.diagnostics[0].message.startswith("the worker exited with code 1 (what it printed is withheld")


FORGED_RESULTS = {
    "not a pickle": lambda path: path.write_bytes(b"\x00garbage"),
    "a mapping with nothing in it": lambda path: torch.save({}, path),
    "cases of the wrong length": lambda path: torch.save({"compile": [], "cases": []}, path),
    "a compile problem for a target never asked": lambda path: torch.save(
        {"compile": [{"targets": [75], "message": "x", "line": None, "module": None, "case": None}]}, path),
    "a FIFO": lambda path: os.mkfifo(path),
    "a link to the solutions": lambda path: os.symlink(ROOT / "solutions" / "vector_add.py", path),
    "a folder": lambda path: path.mkdir(),
}


@pytest.mark.parametrize("name", list(FORGED_RESULTS))
def test_a_forged_worker_result_is_refused_as_data(course, tmp_path, monkeypatch, name):
    """What a worker leaves is data, validated before use: a result file of any other shape or kind costs the
    puzzle its verdict (`crash`, the result is malformed), never the grader's run, and never blocks it."""
    def forging_worker(jobs, scratch, settings, hidden=(), progress=None, **kwargs):
        results = Path(scratch) / "results"
        results.mkdir(exist_ok=True)
        for job in jobs:
            FORGED_RESULTS[name](results / f"{job['id']}.pt")
        return {}
    monkeypatch.setattr(grade_module, "run_worker", forging_worker)
    source = KernelSource("add_kernel", {MAIN: SOLUTION}, {MAIN: []},
                          ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE"))
    started = time.monotonic()
    result = grade_module.grade_sources(course, {"vector_add": source}, settings=Settings())["vector_add"]
    assert time.monotonic() - started < 30
    assert result.status == "error" and result.points == 0
    assert [d.kind for d in result.diagnostics] == ["crash"]
    assert "the worker's result is malformed" in result.diagnostics[0].message


@pytest.mark.parametrize("record", [
    {"race": {"out": [0, 10 ** 400, 1]}},  # pickled ints have no bound: torch.tensor would raise on it
    {"read_unwritten": {"x": [0, -(10 ** 30)]}},
    {"loads": {"x": 10 ** 400}},
    {"lane_race": {"out": [0, 0, 10 ** 400, 1]}},
    {"lane_race": {"out": [0, 0, 1]}},
    {"lane_race": {"nowhere": [0, 0, 1, 2]}},
])
def test_numbers_out_of_every_range_in_a_workers_result_are_refused_as_data(course, monkeypatch, record):
    real = grade_module.run_worker

    def forging_worker(jobs, scratch, settings, hidden=(), progress=None, **kwargs):
        endings = real(jobs, scratch, settings, hidden, progress=progress, **kwargs)
        for job in jobs:
            path = Path(scratch) / "results" / f"{job['id']}.pt"
            outcome = torch.load(path, weights_only=True)
            for key, values in record.items():
                outcome["cases"][0][key].update(values)
            torch.save(outcome, path)
        return endings
    monkeypatch.setattr(grade_module, "run_worker", forging_worker)
    source = KernelSource("add_kernel", {MAIN: SOLUTION}, {MAIN: []},
                          ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE"))
    result = grade_module.grade_sources(course, {"vector_add": source}, settings=Settings())["vector_add"]
    assert result.status == "error" and [d.kind for d in result.diagnostics] == ["crash"]
    assert "the worker's result is malformed" in result.diagnostics[0].message


@pytest.mark.parametrize("forged", [
    {"zero_filled": {"x": torch.zeros(3)}},  # an input's: the second run returns outputs only
    {"zero_filled": {"out": torch.zeros(1, dtype=torch.float64)}},
    {"zero_filled": {"out": "all right"}},
    {"zero_fill_failed": "no"},
])
def test_a_second_run_with_zeros_in_masked_lanes_is_refused_unless_well_formed(course, monkeypatch, forged):
    real = grade_module.run_worker

    def forging_worker(jobs, scratch, settings, hidden=(), progress=None, **kwargs):
        endings = real(jobs, scratch, settings, hidden, progress=progress, **kwargs)
        for job in jobs:
            path = Path(scratch) / "results" / f"{job['id']}.pt"
            outcome = torch.load(path, weights_only=True)
            outcome["cases"][0].update(forged)
            torch.save(outcome, path)
        return endings
    monkeypatch.setattr(grade_module, "run_worker", forging_worker)
    source = KernelSource("add_kernel", {MAIN: SOLUTION}, {MAIN: []},
                          ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE"))
    result = grade_module.grade_sources(course, {"vector_add": source}, settings=Settings())["vector_add"]
    assert result.status == "error" and [d.kind for d in result.diagnostics] == ["crash"]
    assert "the worker's result is malformed" in result.diagnostics[0].message


def _results(student, status="pass", **changes):
    timing = {"sizes": {"N": 1}, "time_s": 1e-3, "speedup": 1.5, "fraction": 0.5, "gbps": 100.0}
    result = {"student": student, "device": {"name": "NVIDIA H100", "driver": "1", "cuda": "13", "torch": "2.11",
                                             "triton": "3.6"},
              "puzzles": [{"id": "vector_add", "title": "Vector add", "status": status,
                           **({"timings": [timing]} if status == "pass" else {"reason": "why"})}]}
    for key, value in changes.items():
        result["puzzles"][0][key] = value
    return result


@pytest.mark.parametrize("changes, field", [
    ({"status": "<script>alert(1)</script>"}, "puzzles/0/status"),
    ({"id": "../../outside"}, "puzzles/0/id"),
    ({"timings": [{"time_s": 0, "speedup": 1e9, "fraction": 0.1}]}, "puzzles/0/timings/0/time_s"),
    ({"timings": []}, "puzzles/0/timings"),
])
def test_the_leaderboard_reads_only_results_of_the_right_shape(tmp_path, changes, field):
    path = tmp_path / "mallory.json"
    path.write_text(json.dumps(_results("mallory", **changes)))
    with pytest.raises(ResultsError, match=re.escape(f"{path}: not results of `triton-course bench` ({field}")):
        load_results([path])
    path.write_text(json.dumps(_results("mallory")).replace("1.5", "NaN"))
    with pytest.raises(ResultsError, match="NaN is not a number a timing can have"):
        load_results([path])


def test_names_on_the_leaderboard_are_text(tmp_path):
    paths = []
    for index, student in enumerate(["$\\frac{a}{$", "<img src=x onerror=alert(1)>", "ada"]):
        paths.append(tmp_path / f"{index}.json")
        paths[-1].write_text(json.dumps(_results(student)))
    paths.append(tmp_path / "failed.json")
    paths[-1].write_text(json.dumps(_results("bob", status="fail", reason="<b>wrong</b>")))
    page = write_leaderboard(load_results(paths), tmp_path / "board").read_text()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<b>wrong</b>" not in page and (tmp_path / "board" / "nvidia-h100-vector_add.png").stat().st_size > 0


@pytest.mark.parametrize("cores, memory_gib, jobs", [(8, 16, 2), (2, 64, 2), (64, 4, 1)])
def test_students_graded_at_once_fit_the_memory(monkeypatch, cores, memory_gib, jobs):
    """Each grading process may use 8 GiB: by default no more run at once than the machine's memory holds."""
    from grader.classroom.batch import default_jobs
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_PHYS_PAGES": memory_gib * 2 ** 18, "SC_PAGE_SIZE": 4096}[name])
    assert default_jobs() == jobs
