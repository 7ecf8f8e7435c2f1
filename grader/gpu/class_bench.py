"""`triton-course bench --class`: a whole class timed on the GPUs, one student after another on this
machine's GPU, or spread over every GPU of a Dask cluster.

On a cluster each GPU has its own worker, started with Dask's command (`CUDA_VISIBLE_DEVICES=i dask worker
ADDRESS --nthreads 1 --resources GPU=1`), and each student is a task that asks for one GPU: a GPU times one
student's kernels at a time, so no other kernel disturbs its timings. As for grading, the submission read on
this machine travels with its task. The results come back as data: each is checked against the leaderboard's
schema before it is written.
"""
import json
import sys
import time
import uuid
from pathlib import Path

from .bench import bench_read, require_gpu
from ..classroom.batch import progress_line, students
from ..classroom.cluster import connect, course_of
from ..pipeline.load import SubmissionError, read_submission
from ..pipeline.results import printable


def bench_class(course, directory, out, puzzle_ids=None, assignment=None, scheduler=None, timed=True,
                progress=sys.stderr):
    """Bench every student of `directory`; write the list of their results to `out` (the leaderboard reads it)."""
    roster = students(directory, assignment)
    if not roster:
        raise SubmissionError(f"{directory}: no submissions (one notebook, .py file or folder per student)")
    shared = {"course_path": str(course.path), "course_text": course.path.read_text(), "puzzles": puzzle_ids,
              "timed": timed}
    tasks, results = {}, {}
    for student, path in roster:
        try:
            tasks[student] = {**shared, "student": student, "submission": read_submission(path, course, puzzle_ids)}
        except SubmissionError as error:
            results[student] = unbenched(course, student, puzzle_ids, str(error))
    started = time.monotonic()
    if scheduler:
        results.update(_on_cluster(course, tasks, scheduler, progress, started))
    else:
        require_gpu()
        for done, (student, task) in enumerate(tasks.items(), start=1):
            results[student] = checked(course, student, puzzle_ids, bench_student(task))
            progress_line(progress, "benching", done, len(tasks), "students", started)
    if progress and tasks:
        progress.write("\n")
    ordered = [results[student] for student, _ in roster]
    Path(out).write_text(json.dumps(ordered, indent=2))
    return ordered


def _on_cluster(course, tasks, scheduler, progress, started):
    from distributed import as_completed
    results = {}
    with connect(scheduler, workers="one per GPU: `CUDA_VISIBLE_DEVICES=i dask worker ADDRESS --nthreads 1 "
                                    "--resources GPU=1`") as client:
        futures = {client.submit(bench_student, task, resources={"GPU": 1}, key=f"bench-{uuid.uuid4().hex}",
                                 pure=False): student for student, task in tasks.items()}
        for done, future in enumerate(as_completed(futures), start=1):
            student = futures[future]
            try:
                results[student] = checked(course, student, tasks[student]["puzzles"], future.result())
            except Exception as error:  # the task failed: its worker died each time it ran it, say
                results[student] = unbenched(course, student, tasks[student]["puzzles"],
                                             f"the GPU stage failed on this submission ({type(error).__name__}: "
                                             f"{printable(error)[:300]})")
            progress_line(progress, "benching", done, len(futures), "students", started)
    return results


def bench_student(task):
    """A task, run where the GPU is: the student's results, as `triton-course bench` writes them."""
    course = course_of(task["course_path"], task["course_text"])
    try:
        return bench_read(course, task["submission"], task["puzzles"], student=task["student"], timed=task["timed"])
    except SubmissionError as error:
        return unbenched(course, task["student"], task["puzzles"], str(error))


def unbenched(course, student, puzzle_ids, reason):
    puzzles = [course.puzzle(pid) for pid in puzzle_ids] if puzzle_ids else course.puzzles
    return {"student": student, "device": None,
            "puzzles": [{"id": p.id, "title": p.title, "status": "error", "reason": reason} for p in puzzles]}


def checked(course, student, puzzle_ids, result):
    """A result as the leaderboard reads it, under the student's own name, or the reason it is not one."""
    from .leaderboard import ResultsError, validate_results
    try:
        validate_results(result)
    except ResultsError as error:
        return unbenched(course, student, puzzle_ids, f"the GPU stage returned malformed results ({error})")
    return {**result, "student": student}
