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
        return graded_key(course, read_graded_notebook(course, nb, tmp_path, ["vector_add"], folder), ["vector_add"],
                          seed)

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
