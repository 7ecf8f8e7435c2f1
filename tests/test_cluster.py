"""A class graded on a real Dask cluster (a scheduler and two workers started with Dask's own commands, on
loopback) gives the CSV and the feedback of the run on this machine, byte for byte, even when a worker is
killed in the middle."""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, dask_cluster
from test_hostile_class import CLASS, make_class

PUZZLE = "vector_add"
HIDDEN_SEED = "7"


@pytest.fixture
def cluster(tmp_path):
    """(scheduler address, [worker processes]): a scheduler and two single-thread workers on loopback."""
    with dask_cluster(tmp_path, 2) as started:
        yield started


# Dask's own setting shortens the 10 s a scheduler that does not answer is tried for.
SHORT_CONNECT = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}


def grade_command(submissions, out, *extra):
    return [sys.executable, "-m", "grader.cli", "grade", str(submissions), "--out", str(out), "--puzzle", PUZZLE,
            "--hidden-seed", HIDDEN_SEED, *extra]


def feedback(out):
    folder = out.parent / f"{out.stem}_feedback"
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.slow
def test_a_class_on_a_cluster_with_a_worker_killed_is_graded_as_on_this_machine(tmp_path, cluster):
    address, workers = cluster
    submissions = tmp_path / "submissions"
    make_class(submissions)
    assert len(CLASS) >= 20
    local = tmp_path / "local.csv"
    subprocess.run(grade_command(submissions, local), check=True, cwd=ROOT, capture_output=True, timeout=600)

    remote = tmp_path / "cluster.csv"
    graded = remote.parent / f"{remote.stem}_feedback"
    client = subprocess.Popen(grade_command(submissions, remote, "--scheduler", address), cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and client.poll() is None and \
            len(list(graded.glob("*.json")) if graded.exists() else []) < 6:
        time.sleep(0.05)
    done_when_killed = len(list(graded.glob("*.json")))
    os.kill(workers[0].pid, signal.SIGKILL)
    workers[0].wait()
    output, errors = client.communicate(timeout=600)
    assert client.returncode == 0, errors.decode()[-3000:]
    assert done_when_killed < len(CLASS), "the worker was killed while students remained"
    assert remote.read_bytes() == local.read_bytes()
    assert feedback(remote) == feedback(local)
    assert len(feedback(remote)) == 2 * len(CLASS), "each student once: a report in JSON and one in words"


@pytest.mark.slow
def test_an_unreachable_scheduler_is_a_usage_error_that_says_what_to_do(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (submissions / "ada.py").write_text((ROOT / "solutions" / "vector_add.py").read_text())
    done = subprocess.run(grade_command(submissions, tmp_path / "grades.csv", "--scheduler", "tcp://127.0.0.1:9"),
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=SHORT_CONNECT)
    assert done.returncode == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in done.stderr and "dask scheduler" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_embedded_scheduler_s_workers_do_not_sample_the_graders_threads():
    """The embedded scheduler's workers are threads of the grader's process: Dask's statistical profiler, which
    samples every thread's stack 100 times a second for a dashboard, would tax the grading itself. What the
    scheduler serves over HTTP is served on loopback only."""
    from grader.classroom.cluster import connect
    with connect(jobs=2) as client:
        workers = client.cluster.workers.values()
        assert len(workers) == 2
        assert not [name for worker in workers for name in worker.periodic_callbacks if name.startswith("profile")]
        listening = [socket.getsockname()[0] for socket in client.cluster.scheduler.http_server._sockets.values()]
        assert listening and set(listening) <= {"127.0.0.1"}, "the scheduler's HTTP server is for this machine only"
