"""`triton-course grade`: a class graded in parallel, one report per student, resumable, a CSV of grades."""
import csv
import io
import json
import shutil

from grader.classroom.batch import grade_class, students

from conftest import BUGS, ROOT


def test_a_class_is_graded_and_an_interrupted_run_resumes(course, tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copy(ROOT / "solutions" / "vector_add.py", submissions / "ada.py")
    shutil.copy(BUGS / "vector_add" / "no_mask.py", submissions / "bob.py")
    (submissions / "cy").mkdir()
    shutil.copy(ROOT / "solutions" / "vector_add.py", submissions / "cy" / "vector_add.py")
    (submissions / "dee").mkdir()  # an empty folder: a 0, not a crash
    assert [s for s, _ in students(submissions)] == ["ada", "bob", "cy", "dee"]

    out = tmp_path / "grades.csv"
    progress = io.StringIO()
    grade_class(course, submissions, out, ["vector_add"], jobs=2, progress=progress)
    with open(out) as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert {s: float(r["points"]) for s, r in rows.items()} == {"ada": 10, "bob": 0, "cy": 10, "dee": 0}
    assert rows["bob"]["vector_add"] == "0" and rows["bob"]["max_points"] == "10"
    assert "4/4 students" in progress.getvalue()
    feedback = tmp_path / "grades_feedback"
    assert "out_of_bounds" in (feedback / "bob.txt").read_text()
    assert "no .py or .ipynb files" in json.loads((feedback / "dee.json").read_text())["error"]

    # An interruption after two students: the rest are graded, the first two are not graded again.
    stamps = {s: (feedback / f"{s}.json").stat().st_mtime_ns for s in ("ada", "bob")}
    for student in ("cy", "dee"):
        (feedback / f"{student}.json").unlink()
    progress = io.StringIO()
    grade_class(course, submissions, out, ["vector_add"], jobs=2, progress=progress)
    assert "2/4 students" in progress.getvalue().split("\r")[1]
    assert {s: (feedback / f"{s}.json").stat().st_mtime_ns for s in ("ada", "bob")} == stamps
    assert (feedback / "cy.json").exists() and (feedback / "dee.json").exists()


def test_outputs_graded_ahead_are_used_only_when_they_look_like_a_report(course, monkeypatch):
    from grader.classroom import nbgrader
    good = {"vector_add": {"text": "vector_add: PASS\n", "points": 10}}
    forged = {
        "above the puzzle's points": {"vector_add": {"text": "", "points": 1e9}},
        "negative": {"vector_add": {"text": "", "points": -1}},
        "a bool for points": {"vector_add": {"text": "", "points": True}},
        "another puzzle": {"outer_add": {"text": "", "points": 1}},
        "an extra puzzle": {**good, "outer_add": {"text": "", "points": 1}},
        "no text": {"vector_add": {"points": 10}},
        "not a mapping": ["vector_add"],
    }
    monkeypatch.setattr(nbgrader, "GRADED_AHEAD", {"good": good, **forged})
    assert nbgrader.graded_ahead("good", course, ["vector_add"]) == good
    for key in forged:
        assert nbgrader.graded_ahead(key, course, ["vector_add"]) is None, key
    assert nbgrader.graded_ahead("absent", course, ["vector_add"]) is None


def test_the_digest_of_a_notebook_changes_with_what_its_grade_depends_on(course, tmp_path):
    import nbformat
    from grader.classroom.nbgrader import graded_key, read_graded_notebook
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# notes"),
                                               nbformat.v4.new_code_cell("x = 1")])
    folder = tmp_path / "student"
    folder.mkdir()

    def key(nb, seed=1):
        read = read_graded_notebook(course, nb, tmp_path, ["vector_add"], folder, "01_vector_add.ipynb")
        return graded_key(course, read, ["vector_add"], seed)

    base = key(notebook)
    restyled = nbformat.from_dict(notebook)
    restyled.cells[0].source = "# other notes"  # markdown, outputs and metadata change no verdict
    restyled.cells[1].outputs = [nbformat.v4.new_output("stream", text="hello")]
    restyled.cells[1].metadata["tags"] = ["mine"]
    assert key(restyled) == base
    code = nbformat.from_dict(notebook)
    code.cells[1].source = "x = 2"
    assert key(code) != base
    assert key(notebook, seed=2) != base
    (folder / "helpers.py").write_text("y = 1\n")  # a module the notebook may import
    assert key(notebook) != base


def test_no_two_students_share_a_feedback_file(tmp_path):
    """A long id is cut short with a hash for its file name; a folder named like that short form, or a name that
    differs only in case or in Unicode's composition (one file on some file systems, one look in a spreadsheet),
    is told apart instead of overwriting another student's report."""
    import hashlib

    from grader.classroom.batch import _feedback
    long = "a" * 210
    for name in (long, f"{long[:100]}~{hashlib.sha256(long.encode()).hexdigest()[:16]}", "Jose", "jose",
                 "jos\u00e9", "jose\u0301"):
        (tmp_path / name).mkdir()
    roster = [student for student, _ in students(tmp_path)]
    assert len(roster) == 6
    files = [_feedback(tmp_path, student, ".json").name for student in roster]
    assert len({name.casefold() for name in files}) == 6
    assert "jose~2" in roster or "Jose~2" in roster


def test_a_class_run_reads_a_few_submissions_ahead_and_each_within_its_budget(course, tmp_path):
    """A folder of sparse 64 MiB notebooks costs the grader's own process no more than the bytes it reads of one
    submission (settings.submission_bytes), read only a few students ahead of the workers; the student's kernel
    is graded, and the files past the budget are named as not read."""
    from grader.pipeline.load import read_submission
    from grader.settings import DEFAULT
    submissions = tmp_path / "submissions"
    (submissions / "mallory").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "vector_add.py", submissions / "mallory" / "vector_add.py")
    for index in range(6):
        with open(submissions / "mallory" / f"notebook_{index}.ipynb", "wb") as sparse:
            sparse.truncate(DEFAULT.notebook_file_bytes)
    shutil.copy(ROOT / "solutions" / "vector_add.py", submissions / "ada.py")
    read = read_submission(submissions / "mallory", course, ["vector_add"])
    assert sum(len(f.data or b"") for f in read.files) <= DEFAULT.submission_bytes
    refused = [f.problem for f in read.files if f.problem and "was not read" in f.problem]
    assert len(refused) == 6 and "all the grader reads of one submission" in refused[0]  # code is read first
    grade_class(course, submissions, tmp_path / "grades.csv", ["vector_add"], jobs=1, progress=None)
    rows = {row["student"]: row for row in csv.DictReader(open(tmp_path / "grades.csv"))}
    assert rows["mallory"]["points"] == rows["ada"]["points"] == "10"


def test_code_beyond_a_submissions_budget_is_not_parsed(course, tmp_path):
    from grader.pipeline.load import load_read, read_submission
    from grader.settings import Settings
    folder = tmp_path / "student"
    folder.mkdir()
    shutil.copy(ROOT / "solutions" / "vector_add.py", folder / "a_vector_add.py")
    (folder / "b_padding.py").write_text("X = 1\n" * 5000)
    settings = Settings(submission_code_chars=len((folder / "a_vector_add.py").read_text()) + 100)
    loaded = load_read(read_submission(folder, course, ["vector_add"], settings), course, ["vector_add"], settings)
    assert loaded["vector_add"].status == "found"
    from grader.pipeline.load.files import CodeBudget, parse_file, read_bytes
    budget = CodeBudget(settings)
    parse_file(read_bytes(folder / "a_vector_add.py", settings), settings, budget)
    refused = parse_file(read_bytes(folder / "b_padding.py", settings), settings, budget)
    assert refused.problem == ("b_padding.py was not read: the submission's files together hold more than "
                               f"{settings.submission_code_chars} characters of code")


def test_the_hidden_seed_is_random_unless_given_and_a_guessable_one_is_named(course, tmp_path):
    import re

    from grader.classroom.autograde import _nbgrader_settings
    from grader.classroom.nbgrader import init_course
    from grader.course import GUESSABLE_SEEDS, guessable_seed
    from grader.pipeline.load import SubmissionError
    init_course(tmp_path / "one", course, {"ps1": ["vector_add"]})
    init_course(tmp_path / "two", course, {"ps1": ["vector_add"]})
    seeds = [int(re.search(r"hidden_seed = (\d+)", (tmp_path / name / "nbgrader_config.py").read_text())[1])
             for name in ("one", "two")]
    assert seeds[0] != seeds[1] and min(seeds) >= GUESSABLE_SEEDS and guessable_seed(seeds[0]) is None
    assert "small enough to guess" in guessable_seed(1234) and "small enough to guess" in guessable_seed(0)
    config = tmp_path / "one" / "nbgrader_config.py"
    config.write_text(re.sub(r"c.GradeWithTritonCourse.hidden_seed = \d+\n", "", config.read_text()))
    try:
        _nbgrader_settings(tmp_path / "one")
        raise AssertionError("a course without a hidden seed was graded")
    except SubmissionError as error:
        assert "sets no c.GradeWithTritonCourse.hidden_seed" in str(error)


def test_nbgrader_reads_what_jupyterlab_opens_and_explains_what_it_could_not_write_back():
    """A byte-order mark or missing metadata (JupyterLab opens both) is graded like any notebook; a cell whose
    source is not text, or a lone surrogate, which would stop nbgrader's autograde with a traceback and no
    feedback, is refused here, where ReadOrExplain turns it into a notebook that says why."""
    import json

    import pytest
    from grader.classroom.nbgrader import _gradable
    cell = {"cell_type": "code", "source": "x = 1", "outputs": [], "execution_count": None}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "cells": [cell]}
    assert _gradable("\ufeff" + json.dumps(notebook)).cells[0].source == "x = 1"
    # What nbformat's schema refuses but nbgrader reads and writes back: cell ids before nbformat 4.5, a stream
    # output without its name.
    older = {**notebook, "nbformat_minor": 4, "cells": [{**cell, "id": "a1", "outputs": [
        {"output_type": "stream", "text": "hi"}]}]}
    assert _gradable(json.dumps(older)).cells[0].source == "x = 1"
    for broken in ({**cell, "source": 42}, {**cell, "source": "\ud800"}):
        with pytest.raises(Exception):
            _gradable(json.dumps({**notebook, "cells": [broken]}))
