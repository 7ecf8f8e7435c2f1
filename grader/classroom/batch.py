"""Grade a whole class: one submission per student, in parallel (on this machine or a Dask cluster), resumable,
with a CSV and a report each."""
import csv
import hashlib
import json
import os
import sys
import time
import unicodedata
from collections import Counter
import uuid
from pathlib import Path

from distributed import as_completed

from .class_page import write_class_page
from .cluster import connect, grade_student, grader_failed, unread
from ..pipeline.load import SUFFIXES, SubmissionError, read_submission
from ..pipeline.results import printable
from ..settings import DEFAULT


def students(directory, assignment=None):
    """(student id, submission path) for every entry of `directory` but hidden ones, sorted by name.

    A folder or a .py or .ipynb file is a student's submission; any other entry (a link, a FIFO, a device,
    another kind of file) is one too, which the loader refuses with its reason: no entry is left out silently.
    An id is the entry's name, printable, without the suffix of a file unless another entry has the same id.
    """
    entries = []
    with os.scandir(directory) as scan:
        for entry in scan:
            if entry.name.startswith("."):
                continue
            folder = entry.is_dir(follow_symlinks=False)
            path = Path(entry.path)
            stem = path.stem if not folder and path.suffix in SUFFIXES else path.name
            entries.append((printable(stem), printable(path.name),
                            path / assignment if folder and assignment else path))
    entries.sort(key=lambda entry: os.fsencode(entry[2]))
    counts = Counter(stem for stem, _, _ in entries)
    found, taken = [], set()
    for stem, name, path in entries:
        student = stem if counts[stem] == 1 else name
        suffix = 1
        # Two names that print alike (a control character and its written escape), that make the same feedback file
        # (a long name cut short, letters that differ in case or in Unicode's composition alone) or look alike in
        # a spreadsheet: the later one is told apart.
        while _file_key(student) in taken:
            suffix += 1
            student = f"{name}~{suffix}"
        taken.add(_file_key(student))
        found.append((student, path))
    return found


def _file_key(student):
    """What makes two students' feedback files one: the file's name as a file system that folds case and
    normalises Unicode would store it."""
    return unicodedata.normalize("NFC", _file_name(student)).casefold()


def grade_class(course, directory, out, puzzle_ids=None, hidden_seed=None, assignment=None, jobs=None,
                progress=sys.stderr, scheduler=None):
    """Grade every student of `directory`; write `out` (CSV), `<out stem>_feedback/<student>.{json,txt}` and the
    class page `<out stem>_class.html` (class_page.py).

    Each student is a task of Dask's scheduler (cluster.py): the embedded one with `jobs` workers, or the
    cluster at `scheduler`. A student whose report is already in the feedback folder is not graded again: an
    interrupted run resumes.
    """
    out = Path(out)
    feedback = out.parent / f"{out.stem}_feedback"
    feedback.mkdir(parents=True, exist_ok=True)
    roster = students(directory, assignment)
    if not roster:
        raise SubmissionError(f"{directory}: no submissions (one notebook, .py file or folder per student)")
    pending = [(sid, path) for sid, path in roster if not _feedback(feedback, sid, ".json").exists()]
    done, started = len(roster) - len(pending), time.monotonic()
    progress_line(progress, "grading", done, len(roster), "students", started)

    def record(student, outcome):
        nonlocal done
        _feedback(feedback, student, ".txt").write_text(outcome["text"] + "\n")
        partial = _feedback(feedback, student, ".json.partial")
        partial.write_text(json.dumps({"student": student, **outcome["data"]}, indent=2))
        partial.rename(_feedback(feedback, student, ".json"))  # written last: its presence means the student is done
        done += 1
        progress_line(progress, "grading", done, len(roster), "students", started)

    shared = {"course_path": str(course.path), "course_text": course.path.read_text(), "puzzles": puzzle_ids,
              "hidden": [str(Path(directory).resolve())], "hidden_seed": hidden_seed}
    with connect(scheduler, jobs or default_jobs()) as client:
        tasks, finished, unsent = {}, as_completed(), iter(pending)

        def send_next():
            """Read the next student's submission here and send it to be graded wherever the scheduler says.
            Only a few are read ahead of the workers: a class's submissions need not fit in memory at once."""
            for student, path in unsent:
                try:
                    submission = read_submission(path, course, puzzle_ids)
                except SubmissionError as error:
                    record(student, unread(str(error)))
                    continue
                future = client.submit(grade_student, {**shared, "student": student, "submission": submission},
                                       key=f"grade-{len(tasks)}-{uuid.uuid4().hex}", pure=False)
                tasks[future] = student
                finished.add(future)
                return

        for _ in range(2 * max(1, sum(client.nthreads().values()))):
            send_next()
        for future in finished:
            try:
                outcome = _checked(future.result())
            except Exception as error:  # the task itself failed: a worker it ran on died each time, say
                outcome = grader_failed(f"{type(error).__name__}: {printable(error)[:300]}")
            record(tasks.pop(future), outcome)
            send_next()
    rows = _write_csv(out, roster, feedback, course, puzzle_ids)
    if progress:
        progress.write("\n")
    return rows


def _checked(outcome):
    """A task's result, as the client writes it: a report's JSON data and its text."""
    if not (isinstance(outcome, dict) and isinstance(outcome.get("text"), str) and
            isinstance(outcome.get("data"), dict) and isinstance(outcome["data"].get("puzzles"), list)):
        raise ValueError("the task returned something other than a report")
    json.dumps(outcome["data"])
    return outcome


def progress_line(stream, what, done, total, unit, started):
    """`what [#####.....] done/total unit, seconds`, rewritten in place."""
    if stream:
        width = 30
        bar = "#" * (width * done // max(total, 1)) + "." * (width - width * done // max(total, 1))
        stream.write(f"\r{what} [{bar}] {done}/{total} {unit}, {time.monotonic() - started:.0f} s")
        stream.flush()


def default_jobs(settings=DEFAULT):
    """Students graded at once: one per core, as many as the machine's memory holds at each worker's limit."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return max(1, min(os.cpu_count() or 1, memory // settings.memory_limit_bytes))


def _feedback(folder, student, suffix):
    """The feedback file of a student."""
    return folder / f"{_file_name(student)}{suffix}"


def _file_name(student):
    """The id itself unless it is too long for a file name (students() keeps them apart)."""
    if len(student.encode()) > 200:
        return f"{student[:100]}~{hashlib.sha256(student.encode()).hexdigest()[:16]}"
    return student


def _write_csv(out, roster, feedback, course, puzzle_ids):
    """Write the CSV, and the class page next to it, from the students' reports."""
    puzzles = puzzle_ids or [p.id for p in course.puzzles]
    maximum = sum(course.puzzle(pid).points for pid in puzzles)
    reports = [(student, json.loads(_feedback(feedback, student, ".json").read_text())) for student, _ in roster]
    rows = []
    for student, data in reports:
        points = {p["id"]: p["points"] for p in data["puzzles"]}
        rows.append({"student": student, **{pid: points.get(pid, 0) for pid in puzzles},
                     "points": data["points"], "max_points": maximum, "error": data.get("error") or ""})
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["student", *puzzles, "points", "max_points", "error"])
        writer.writeheader()
        writer.writerows({**row, "student": spreadsheet_safe(row["student"]), "error": spreadsheet_safe(row["error"])}
                         for row in rows)
    write_class_page(class_page_path(out), course, puzzles, reports)
    return rows


def class_page_path(out):
    return Path(out).parent / f"{Path(out).stem}_class.html"


def spreadsheet_safe(text):
    """A cell a spreadsheet shows as text: one that starts like a formula gets a leading quote (OWASP's advice
    for CSV injection), so that a student named `=HYPERLINK(...)` is a name and not a link."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r", "\n") else text
