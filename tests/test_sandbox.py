"""The worker's process: limits, endings told apart, and (under bubblewrap) no way out of its scratch directory."""
import socket
import sys
import time

import pytest

from grader.pipeline.sandbox import Child, command, sandbox_kind
from grader.settings import Settings

from conftest import ROOT

needs_bubblewrap = pytest.mark.skipif(sandbox_kind() != "bubblewrap",
                                      reason="bubblewrap is not installed here (apt-get install bubblewrap)")


def run(tmp_path, code, settings=Settings(), hidden=(), wait=60):
    child = Child([sys.executable, "-c", code], tmp_path, settings, hidden)
    deadline = time.monotonic() + wait
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if child.poll() is None:
        child.kill()
    return child


def test_a_segfault_is_a_crash_with_its_signal(tmp_path):
    child = run(tmp_path, "import ctypes; ctypes.string_at(0)")
    ending = child.ending()
    assert ending.kind == "crash" and "SIGSEGV" in ending.message


def test_a_memory_bomb_meets_the_memory_limit(tmp_path):
    child = run(tmp_path, "x = bytearray(16 * 2 ** 30)", Settings(memory_limit_bytes=2 * 2 ** 30))
    assert child.ending().kind == "out_of_memory"


def test_an_exit_is_reported_with_its_code(tmp_path):
    assert child_message(run(tmp_path, "import os; os._exit(7)")) == "the worker exited with code 7"


def child_message(child):
    return child.ending().message.splitlines()[0]


def test_output_is_capped(tmp_path):
    child = run(tmp_path, "import sys\nfor _ in range(2000): sys.stdout.write('x' * 10000)",
                Settings(output_cap_bytes=50_000))
    output = child.wait_output()
    assert len(output) < 60_000 and output.endswith("[output truncated]")


def test_cpu_limit_ends_a_busy_loop(tmp_path):
    child = run(tmp_path, "while True: pass", Settings(cpu_limit_s=1))
    assert child.ending().kind == "timeout"


@needs_bubblewrap
def test_the_file_system_is_read_only_outside_scratch(tmp_path):
    target = ROOT / "course.yml"
    before = target.read_bytes()
    child = run(tmp_path, f"open({str(target)!r}, 'a').write('x')")
    assert "Read-only file system" in child.wait_output()
    assert target.read_bytes() == before
    child = run(tmp_path, f"open({str(tmp_path / 'ok.txt')!r}, 'w').write('ok')")
    assert child.poll() == 0 and (tmp_path / "ok.txt").read_text() == "ok"


@needs_bubblewrap
def test_solutions_and_hidden_paths_are_empty(tmp_path):
    secret = tmp_path.parent / f"{tmp_path.name}-gradebook"
    secret.mkdir()
    (secret / "gradebook.db").write_text("grades")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    child = run(scratch, f"import os; print(sorted(os.listdir({str(ROOT / 'solutions')!r})), "
                         f"sorted(os.listdir({str(secret)!r})))", hidden=[secret])
    assert child.wait_output().strip() == "[] []"
    assert (secret / "gradebook.db").read_text() == "grades"


@needs_bubblewrap
def test_no_network_and_no_view_of_the_grader(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    child = run(tmp_path, "import os, socket\n"
                          f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')\n"
                          "except OSError:\n    print('refused')\n"
                          "print(os.getppid())")
    refused, parent = child.wait_output().split()
    server.close()
    assert refused == "refused"
    assert parent in ("0", "1"), "the worker has its own process namespace"


def test_without_bubblewrap_the_command_is_unchanged(monkeypatch, tmp_path):
    import grader.pipeline.sandbox
    monkeypatch.setattr(grader.pipeline.sandbox, "_SANDBOX", "resource limits only")
    assert command(["python", "-V"], tmp_path) == ["python", "-V"]
