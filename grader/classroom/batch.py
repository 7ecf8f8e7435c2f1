"""Grade a whole class: one submission per student, in parallel, resumable, with a CSV and a report each."""
import csv
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ..pipeline.grade import grade_submission
from ..pipeline.load import SUFFIXES, SubmissionError
from ..pipeline.report import to_text


def students(directory, assignment=None):
    """(student id, submission path) for each file or folder in `directory`, sorted."""
    found = []
    for entry in sorted(Path(directory).iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            found.append((entry.name, entry / assignment if assignment else entry))
        elif entry.suffix in SUFFIXES:
            found.append((entry.stem, entry))
    return found


def grade_class(course, directory, out, puzzle_ids=None, hidden_seed=None, assignment=None, jobs=None,
                progress=sys.stderr):
    """Grade every student of `directory`; write `out` (CSV) and `<out stem>_feedback/<student>.{json,txt}`.

    A student whose report is already in the feedback folder is not graded again: an interrupted run resumes.
    """
    out = Path(out)
    feedback = out.parent / f"{out.stem}_feedback"
    feedback.mkdir(parents=True, exist_ok=True)
    roster = students(directory, assignment)
    if not roster:
        raise SubmissionError(f"{directory}: no submissions (one notebook, .py file or folder per student)")
    pending = [(sid, path) for sid, path in roster if not (feedback / f"{sid}.json").exists()]
    done, started = len(roster) - len(pending), time.monotonic()
    _progress(progress, done, len(roster), started)

    def grade_one(student, path):
        try:
            report = grade_submission(course, path, puzzle_ids, hidden=[directory], hidden_seed=hidden_seed)
            data, text = report.to_dict(), to_text(report, f"{student}: {path}")
        except SubmissionError as error:  # an empty or unreadable submission is worth 0, not a crash
            data, text = {"puzzles": [], "points": 0, "max_points": None, "error": str(error)}, str(error)
        (feedback / f"{student}.txt").write_text(text + "\n")
        partial = feedback / f"{student}.json.partial"
        partial.write_text(json.dumps(data, indent=2))
        partial.rename(feedback / f"{student}.json")  # written last: its presence means the student is done

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count()) as pool:
        for future in as_completed([pool.submit(grade_one, sid, path) for sid, path in pending]):
            future.result()
            done += 1
            _progress(progress, done, len(roster), started)
    rows = _write_csv(out, roster, feedback, course, puzzle_ids)
    if progress:
        progress.write("\n")
    return rows


def _progress(stream, done, total, started):
    if stream:
        width = 30
        bar = "#" * (width * done // total) + "." * (width - width * done // total)
        stream.write(f"\rgrading [{bar}] {done}/{total} students, {time.monotonic() - started:.0f} s")
        stream.flush()


def _write_csv(out, roster, feedback, course, puzzle_ids):
    puzzles = puzzle_ids or [p.id for p in course.puzzles]
    rows = []
    for student, _ in roster:
        data = json.loads((feedback / f"{student}.json").read_text())
        points = {p["id"]: p["points"] for p in data["puzzles"]}
        maximum = sum(course.puzzle(pid).points for pid in puzzles)
        rows.append({"student": student, **{pid: points.get(pid, 0) for pid in puzzles},
                     "points": data["points"], "max_points": maximum})
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["student", *puzzles, "points", "max_points"])
        writer.writeheader()
        writer.writerows(rows)
    return rows
