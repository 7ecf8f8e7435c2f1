"""Where a class's students are graded: Dask's scheduler, on this machine or on a cluster.

Without an address, an embedded scheduler runs one worker thread per job in this process (no cluster to
start). With `tcp://HOST:PORT`, the same tasks go to an existing cluster started with Dask's own commands
(`dask scheduler`, `dask worker ADDRESS --nworkers N --nthreads 1`). A task is one student: the submission
read on this machine (its files' bytes, nothing of the file system) and the course's text travel with it, so
the workers need no shared file system, only this package and its Python environment. Each worker
sandboxes each submission as a local run does. A worker that dies loses nothing: the scheduler gives its
students to the others.
"""
import logging
from contextlib import contextmanager
from functools import lru_cache

from ..course import load_course
from ..pipeline.grade import grade_read
from ..pipeline.load import SubmissionError
from ..pipeline.report import to_text
from ..pipeline.results import printable


class ClusterError(Exception):
    """The Dask scheduler cannot be reached."""


@contextmanager
def connect(scheduler=None, jobs=1, workers="`dask worker ADDRESS --nthreads 1`, or leave out --scheduler to grade "
                                             "on this machine"):
    """A Dask client: of the scheduler at `scheduler`, or of an embedded one with `jobs` worker threads.
    `workers`: how to start the workers the work needs, for the message when the scheduler cannot be reached."""
    from distributed import Client, LocalCluster
    if scheduler:
        try:
            client = Client(scheduler, timeout=_connect_timeout())
        except (OSError, TimeoutError, ValueError) as error:
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler} ({error}). Start one with "
                               f"`dask scheduler` and its workers with {workers}") from None
        with client:
            yield client
        return
    import dask
    for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny"):
        logging.getLogger(name).setLevel(logging.ERROR)  # its notices are not the instructor's business
    # Dask's workers sample every thread's stack 100 times a second for its dashboard: a tenth of a core here,
    # where the workers are threads of this process. The scheduler's HTTP server stays on loopback (without an
    # address it listens on every interface, at 8787).
    with dask.config.set({"distributed.worker.profile.enabled": False}), \
            LocalCluster(n_workers=jobs, threads_per_worker=1, processes=False,
                         dashboard_address="127.0.0.1:0") as local, \
            Client(local) as client:
        yield client


def _connect_timeout():
    """Seconds to keep trying a scheduler that does not answer: 10, or Dask's own connect timeout where it is
    set shorter (DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)."""
    import dask
    from dask.utils import parse_timedelta
    return min(10.0, parse_timedelta(dask.config.get("distributed.comm.timeouts.connect")))


def grade_student(task):
    """A class's task, run on a worker: {"data": the report as JSON data, "text": the report in words}."""
    import torch
    # Its tensors are small: an OpenMP team per task thread would only spin between them, on the cores that
    # the sandboxed workers need (a sixth of a core per student). Per thread: OpenMP keeps the count per thread.
    torch.set_num_threads(1)
    course = course_of(task["course_path"], task["course_text"])
    student, submission = task["student"], task["submission"]
    try:
        report = grade_read(course, submission, task["puzzles"], hidden=task["hidden"],
                            hidden_seed=task["hidden_seed"])
        return {"data": report.to_dict(), "text": to_text(report, f"{student}: {printable(submission.path)}")}
    except SubmissionError as error:  # an empty or unreadable submission is worth 0, not a crash
        return unread(str(error))
    except Exception as error:  # the grader's own failure on one submission must not cost the class its grades
        return grader_failed(f"{type(error).__name__}: {printable(error)[:300]}")


def unread(reason):
    return {"data": {"puzzles": [], "points": 0, "max_points": None, "error": reason}, "text": reason}


def grader_failed(why):
    return unread(f"the grader failed on this submission ({why}); the rest of the class was graded. Grade it "
                  "again after the grader is fixed: delete this student's feedback files and run the same command.")


@lru_cache(maxsize=8)
def course_of(path, text):
    return load_course(path, text=text)
