"""`triton-course nbgrader autograde`: nbgrader's autograde for a class of any size.

`nbgrader autograde` grades one notebook after another. Here the same command runs in two steps. First the
kernels, the costly part, are graded in parallel on Dask (cluster.py: this machine's cores, or a cluster):
each submitted notebook is read on this machine as nbgrader will see it (its locked cells restored from the
source notebook) and graded on a worker; what its test cells will show is kept in memory, under a digest of
everything the grade depends on. Then nbgrader's own autograde, unchanged, does its bookkeeping (the
gradebook, the autograded notebooks, late penalties) in `jobs` processes of its own, each handed its
students' outputs on its standard input (no file that a submission could write), and GradeWithTritonCourse
takes each notebook's outputs from there instead of grading it again. A notebook
that nbgrader sees otherwise (a tampered cell restored differently, say) is not in the folder and is graded
there, as a plain `nbgrader autograde` would: the grades are the same either way. generate_feedback, export
and the formgrader then work as usual.
"""
import glob
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import nbformat
from distributed import as_completed

from .batch import default_jobs, progress_line
from .cluster import connect, course_of
from .nbgrader import NO_HIDDEN_SEED, graded_key, puzzles_of, read_graded_notebook, test_cell_outputs
from ..course import guessable_seed, load_course
from ..pipeline.grade import grade_read
from ..pipeline.load import SubmissionError
from ..pipeline.results import printable


@dataclass
class Autograded:
    students: int  # students nbgrader autograded
    failures: list  # the students it could not autograde, and why
    kernels_s: float  # seconds grading the kernels on Dask
    bookkeeping_s: float  # seconds of nbgrader's own autograde


def autograde(course_dir, assignment, jobs=None, scheduler=None, force=False, student="*", progress=sys.stderr):
    """Autograde `assignment` of the nbgrader course at `course_dir`."""
    course_dir = Path(course_dir).resolve()
    settings = _nbgrader_settings(course_dir)
    course = load_course(settings["course_file"] or None)
    pending = _pending(course_dir, settings, assignment, student, force)
    jobs = jobs or default_jobs()
    started = time.monotonic()
    ahead = _grade_ahead(course, settings["hidden_seed"], course_dir, pending, jobs, scheduler, progress)
    graded = time.monotonic()
    failed = _bookkeeping(course_dir, assignment, sorted(pending), ahead, jobs, force, progress)
    if failed:  # once more, one process: a gradebook busy for too long, say
        failed = _bookkeeping(course_dir, assignment, failed, ahead, 1, force, progress)
    return Autograded(len(pending) - len(failed), failed, graded - started, time.monotonic() - graded)


def _nbgrader_settings(course_dir):
    """What nbgrader_config.py says of the course, the seed and the folders (nbgrader's defaults otherwise)."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader
    try:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    except ConfigFileNotFound:
        raise SubmissionError(f"{printable(course_dir)} has no nbgrader_config.py: run this command in the course "
                              "directory that `triton-course nbgrader init` wrote") from None
    except Exception as error:  # whatever the instructor's file raises
        raise SubmissionError(f"{printable(course_dir / 'nbgrader_config.py')} cannot be read: "
                              f"{type(error).__name__}: {printable(error)}") from None
    ours = config.GradeWithTritonCourse
    coursedir = CourseDirectory(config=config)
    coursedir.root = str(course_dir)
    if ours.get("hidden_seed") is None:
        raise SubmissionError(NO_HIDDEN_SEED)
    warning = guessable_seed(ours.hidden_seed)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    return {"course_file": ours.get("course_file", ""), "hidden_seed": ours.hidden_seed, "coursedir": coursedir}


def _pending(course_dir, settings, assignment, student, force):
    """{student id: [(submitted notebook, the instructor's source of it)]} of the students nbgrader will
    autograde."""
    coursedir = settings["coursedir"]
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    sources = {path.name: path for path in source.glob("*.ipynb")}
    if not sources:
        raise SubmissionError(f"{printable(source)}: no source notebooks of {printable(assignment)}; run "
                              "`nbgrader generate_assignment` first")
    pattern = re.compile(coursedir.format_path(coursedir.submitted_directory, "(?P<student_id>.*)",
                                               re.escape(assignment), escape=True))
    pending = {}
    for folder in glob.glob(coursedir.format_path(coursedir.submitted_directory, student, assignment)):
        match = pattern.match(folder)
        if not match or not os.path.isdir(folder):
            continue
        student_id = match.group("student_id")
        if not force and os.path.exists(coursedir.format_path(coursedir.autograded_directory, student_id, assignment)):
            continue  # nbgrader skips a student already autograded
        pending[student_id] = [(Path(folder) / name, path) for name, path in sources.items()
                               if (Path(folder) / name).is_file()]
    return pending


def _grade_ahead(course, hidden_seed, course_dir, pending, jobs, scheduler, progress):
    """Grade every pending notebook on Dask: {student: {digest: its test cell outputs}}."""
    notebooks = [(student_id, path, source) for student_id, found in pending.items() for path, source in found]
    started, done, ahead = time.monotonic(), 0, {}
    course_text = course.path.read_text()
    with connect(scheduler, jobs) as client, tempfile.TemporaryDirectory() as scratch:
        tasks = {}
        for student_id, path, source in notebooks:
            try:
                nb = _as_nbgrader_sees_it(path, source)
                puzzle_ids = [pid for pid in puzzles_of(nb) if any(p.id == pid for p in course.puzzles)]
                if not puzzle_ids:
                    continue
                submission = read_graded_notebook(course, nb, scratch, puzzle_ids, path.parent, path.name)
            except Exception:  # unreadable, tampered: nbgrader's own step grades it, or says why it cannot
                continue
            task = {"course_path": str(course.path), "course_text": course_text,
                    "submission": submission, "puzzles": puzzle_ids, "hidden": [str(course_dir)],
                    "hidden_seed": hidden_seed}
            future = client.submit(grade_notebook, task, key=f"autograde-{uuid.uuid4().hex}", pure=False)
            tasks[future] = (student_id, graded_key(course, submission, puzzle_ids, hidden_seed))
        for future in as_completed(tasks):
            done += 1
            progress_line(progress, "grading kernels", done, len(tasks), "notebooks", started)
            try:
                outputs = future.result()
            except Exception:  # its worker died each time: nbgrader's own step grades it
                continue
            if outputs is not None:
                student_id, key = tasks[future]
                ahead.setdefault(student_id, {})[key] = outputs
    if progress and tasks:
        progress.write("\n")
    return ahead


def grade_notebook(task):
    """A task run on a worker: a notebook's test cell outputs, or None where nbgrader's own step must grade it
    (to report the failure as a plain autograde does)."""
    course = course_of(task["course_path"], task["course_text"])
    try:
        report = grade_read(course, task["submission"], task["puzzles"], hidden=task["hidden"],
                            hidden_seed=task["hidden_seed"])
    except Exception:
        return None
    return test_cell_outputs(report)


def _as_nbgrader_sees_it(path, source):
    """The submitted notebook with what nbgrader's OverwriteCells restores from the gradebook: the cell type of
    each cell of the instructor's, and the text of the locked ones."""
    nb = nbformat.read(path, as_version=4)
    instructor = {c.metadata["nbgrader"]["grade_id"]: c for c in nbformat.read(source, as_version=4).cells
                  if isinstance(c.metadata.get("nbgrader", {}).get("grade_id"), str)}
    for cell in nb.cells:
        original = instructor.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
        if original is not None:
            cell.cell_type = original.cell_type
            if original.metadata["nbgrader"].get("locked") or original.metadata["nbgrader"].get("grade"):
                cell.source = original.source
    return nb


def _bookkeeping(course_dir, assignment, students, ahead, jobs, force, progress):
    """nbgrader's autograde of `students`, in up to `jobs` processes (_shard below); the students it failed on."""
    if not students:
        return 0, []
    shards = [students[k::jobs] for k in range(min(jobs, len(students)))]
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` of its environment
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    logs = course_dir / "autograde_logs"
    logs.mkdir(exist_ok=True)
    processes = []
    for number, shard in enumerate(shards):
        request = {"assignment": assignment, "students": shard, "force": force,
                   "graded_ahead": {key: outputs for student in shard for key, outputs in ahead.get(student, {}).items()}}
        log = (logs / f"{assignment}-{number}.log").open("a")  # a retry's log follows the first attempt's
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}: nbgrader autograde of {len(shard)} students\n")
        log.flush()
        process = subprocess.Popen([sys.executable, "-m", "grader.classroom.autograde"], cwd=course_dir, env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        process.stdin.write(json.dumps(request))
        process.stdin.close()
        processes.append((process, log))
    outcomes = queue.Queue()

    def relay(process):  # one JSON line per student, then None
        for line in process.stdout:
            outcomes.put(json.loads(line))
        outcomes.put(None)

    for process, _ in processes:
        threading.Thread(target=relay, args=(process,), daemon=True).start()
    started, done, running, reported = time.monotonic(), 0, len(processes), {}
    while running:
        outcome = outcomes.get()
        if outcome is None:
            running -= 1
            continue
        done += 1
        reported[outcome["student"]] = outcome["ok"]
        progress_line(progress, "nbgrader autograde", done, len(students), "students", started)
    for process, log in processes:
        process.wait()
        log.close()
    if progress:
        progress.write("\n")
    # A student a process did not report (it died) failed as much as one nbgrader reported failing.
    return [student for student in students if not reported.get(student)]


def _shard(request):
    """One process of the bookkeeping: nbgrader's autograde app, started once, run for each of its students."""
    import logging
    from nbgrader.apps.nbgraderapp import NbGraderApp
    from nbgrader.converters import Autograde
    from nbgrader.converters.base import NbGraderException
    from .nbgrader import GRADED_AHEAD
    GRADED_AHEAD.update(request["graded_ahead"])
    app = NbGraderApp.instance()
    app.initialize(["autograde", request["assignment"]] + (["--force"] if request["force"] else []))
    autograde_app = app.subapp
    autograde_app.coursedir.assignment_id = request["assignment"]
    for student in request["students"]:
        autograde_app.coursedir.student_id = glob.escape(student)
        try:
            Autograde(coursedir=autograde_app.coursedir, parent=autograde_app).start()
            ok = True
        except NbGraderException:
            ok = False
        except Exception:
            logging.getLogger("triton-course").exception("autograding %s failed", student)
            ok = False
        print(json.dumps({"student": student, "ok": ok}), flush=True)


if __name__ == "__main__":
    _shard(json.loads(sys.stdin.read()))
