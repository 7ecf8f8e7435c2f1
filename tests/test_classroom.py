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
