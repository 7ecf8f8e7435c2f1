"""The worker's process: limits, endings told apart, a minimal environment, nothing it starts outlives it, and
(under bubblewrap) a file system of the system, Python and the grader's package only.

Tests marked `both` run once under bubblewrap (when it is installed) and once with resource limits only."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import grader.pipeline.sandbox as sandbox
from grader.pipeline.sandbox import Child, command, sandbox_kind
from grader.settings import Settings

from conftest import ROOT

HAVE_BUBBLEWRAP = sandbox_kind() == "bubblewrap"
needs_bubblewrap = pytest.mark.skipif(not HAVE_BUBBLEWRAP,
                                      reason="bubblewrap is not installed here (apt-get install bubblewrap)")


def run(tmp_path, code, settings=Settings(), hidden=(), wait=60):
    child = Child([sys.executable, "-c", code], tmp_path, settings, hidden)
    deadline = time.monotonic() + wait
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if child.poll() is None:
        child.kill()
    return child


def test_a_segfault_is_a_crash_with_its_signal(tmp_path, isolation):
    child = run(tmp_path, "import ctypes; ctypes.string_at(0)")
    ending = child.ending()
    assert ending.kind == "crash" and "SIGSEGV" in ending.message


def test_a_memory_bomb_meets_the_memory_limit(tmp_path):
    child = run(tmp_path, "x = bytearray(16 * 2 ** 30)", Settings(memory_limit_bytes=2 * 2 ** 30))
    assert child.ending().kind == "out_of_memory"


def test_an_exit_is_reported_with_its_code(tmp_path, isolation):
    assert child_message(run(tmp_path, "import os; os._exit(7)")) == "the worker exited with code 7"


def child_message(child):
    return child.ending().message.splitlines()[0]


def test_output_is_capped(tmp_path):
    child = run(tmp_path, "import sys\nfor _ in range(2000): sys.stdout.write('x' * 10000)",
                Settings(output_cap_bytes=50_000))
    output = child.wait_output()
    assert len(output) < 60_000 and output.endswith("[output truncated]")


def test_cpu_limit_ends_a_busy_loop(tmp_path, isolation):
    child = run(tmp_path, "while True: pass", Settings(cpu_limit_s=1))
    assert child.ending().kind == "timeout"


def test_the_environment_has_nothing_of_the_graders(tmp_path, isolation, monkeypatch):
    monkeypatch.setenv("INSTRUCTOR_TOKEN", "s3cret-token")
    child = run(tmp_path, "import os; print(sorted(os.environ))")
    names = eval(child.wait_output())
    assert "INSTRUCTOR_TOKEN" not in names and "s3cret-token" not in child.wait_output()
    assert set(names) <= {"PATH", "HOME", "TMPDIR", "LANG", "TRITON_CACHE_DIR", "PYTHONDONTWRITEBYTECODE",
                          "PYTHONPATH", "PWD"}


def test_nothing_the_worker_starts_outlives_it(tmp_path, isolation):
    """A daemon in its own session, double-forked, still dies with its worker."""
    pid_file = tmp_path / "daemon.pid"
    run(tmp_path, "import os, time\n"
                  "if os.fork() == 0:\n"
                  "    os.setsid()\n"
                  "    if os.fork() == 0:\n"
                  f"        open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                  "        time.sleep(120)\n"
                  "    os._exit(0)\n"
                  "time.sleep(1)\n")
    if isolation == "bubblewrap":  # its own process namespace: the pid it saw is not ours, and it is gone
        assert pid_file.exists()
        return
    pid = int(pid_file.read_text())
    time.sleep(0.5)
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_a_worker_that_hangs_is_ended_with_what_it_started(tmp_path, isolation):
    pid_file = tmp_path / "daemon.pid"
    child = run(tmp_path, "import os, time\n"
                          "if os.fork() == 0:\n"
                          "    os.setsid()\n"
                          f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                          "    time.sleep(120)\n"
                          "time.sleep(120)\n", wait=3)
    assert child.poll() is not None
    if isolation != "bubblewrap":
        time.sleep(0.5)
        assert not os.path.exists(f"/proc/{int(pid_file.read_text())}")


def test_processes_are_limited(tmp_path, isolation):
    if isolation != "bubblewrap" and os.geteuid() == 0:
        pytest.skip("without bubblewrap a grader running as root cannot limit its worker's processes (the report "
                    "says so)")
    child = run(tmp_path, "import subprocess\nstarted = []\n"
                          "try:\n"
                          "    for _ in range(200): started.append(subprocess.Popen(['sleep', '5']))\n"
                          "except OSError as error: print('stopped at', len(started))\n"
                          "else: print('all', len(started))", Settings(process_limit=20))
    output = child.wait_output()
    assert output.startswith("stopped at") and int(output.split()[2]) < 20, output


@needs_bubblewrap
def test_the_checkout_the_home_and_other_folders_are_not_there(tmp_path):
    others = tmp_path.parent / f"{tmp_path.name}-class"
    others.mkdir()
    (others / "bob.py").write_text("bob's kernel")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    home_files = [p for p in Path.home().iterdir() if p.is_file()][:3]  # ~/.bashrc, ~/.gitconfig, ...
    paths = [ROOT / ".git", ROOT / "solutions", ROOT / "course.yml", ROOT / "tests", others, *home_files]
    child = run(scratch, f"import os\nfor p in {[str(p) for p in paths]!r}: print(os.path.exists(p))\n"
                         f"print(sorted(os.listdir({str(ROOT)!r})))")
    *exists, listing = child.wait_output().strip().splitlines()
    assert exists == ["False"] * len(paths)
    assert set(eval(listing)) <= {"grader", ".venv"}, "of the checkout, only the package and its environment"


@needs_bubblewrap
def test_the_file_system_is_read_only_outside_scratch(tmp_path):
    child = run(tmp_path, f"open({str(ROOT / 'grader' / 'x.py')!r}, 'w').write('x')")
    assert "Read-only file system" in child.wait_output()
    assert not (ROOT / "grader" / "x.py").exists()
    child = run(tmp_path, f"open({str(tmp_path / 'ok.txt')!r}, 'w').write('ok')")
    assert child.poll() == 0 and (tmp_path / "ok.txt").read_text() == "ok"


@needs_bubblewrap
def test_no_network_and_no_view_of_the_grader(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    child = run(tmp_path, "import os, socket\n"
                          f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')\n"
                          "except OSError:\n    print('refused')\n"
                          f"print(os.getppid(), os.path.exists('/proc/{os.getpid()}'))")
    refused, parent, grader_visible = child.wait_output().split()
    server.close()
    assert refused == "refused"
    assert parent in ("0", "1") and grader_visible == "False", "the worker has its own process namespace"


def test_without_bubblewrap_the_command_is_contained(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "_SANDBOX", "resource limits only")
    wrapped = command(["python", "-V"], tmp_path)
    assert wrapped[-2:] == ["python", "-V"] and wrapped[-3].endswith("contain.py")


def test_the_hidden_seed_is_not_in_the_graders_command_line(tmp_path):
    """Without bubblewrap a worker of the same user can read /proc/<grader>/cmdline: the grader rewrites it."""
    script = ("import sys, time\nsys.path.insert(0, %r)\nfrom grader.pipeline.sandbox import conceal\n"
              "conceal({sys.argv[3]})\nprint('ready', flush=True)\ntime.sleep(30)\n" % str(ROOT))
    grader = subprocess.Popen([sys.executable, "-c", script, "grade", "--hidden-seed", "8675309", "--seed=8675309"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert grader.stdout.readline().strip() == "ready"
        cmdline = open(f"/proc/{grader.pid}/cmdline", "rb").read()
        assert b"8675309" not in cmdline and b"--hidden-seed" in cmdline
    finally:
        grader.kill()
        grader.wait()


@needs_bubblewrap
def test_the_folders_python_was_started_from_are_not_there(tmp_path, monkeypatch):
    """sys.path holds the folder of the script that started the grader (or the working directory): where an
    instructor keeps the course. The worker's file system has only the installation's own folders."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c.GradeWithTritonCourse.hidden_seed = 1234")
    monkeypatch.syspath_prepend(str(course))
    monkeypatch.syspath_prepend("/tmp")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    child = run(scratch, f"import os\nprint(os.path.exists({str(course / 'nbgrader_config.py')!r}))\n"
                         "print(sorted(os.listdir('/tmp')))")
    exists, listing = child.wait_output().strip().splitlines()
    assert exists == "False"
    assert eval(listing) == [tmp_path.parts[2]], "the worker's /tmp holds its scratch directory only"
