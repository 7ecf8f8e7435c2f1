"""`triton-course` list, check and doctor: outputs, JSON shape and exit codes."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cli, doctor

from conftest import BUGS, ROOT, write_notebook


def run(*args):
    result = subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=ROOT)
    return result.returncode, result.stdout, result.stderr


def test_list_in_course_order(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:4] == ["#", "id", "title", "points"]
    assert out[2].split()[:2] == ["1", "vector_add"] and "puzzles/01_vector_add.ipynb" in out[2]


def test_list_json(capsys):
    assert cli.main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in listing["puzzles"]][:3] == ["vector_add", "outer_add", "strided_views"]
    assert len(listing["puzzles"]) == 12
    assert listing["puzzles"][0] == {"id": "vector_add", "title": "Vector add", "points": 10, "kernel": "add_kernel",
                                     "notebook": "puzzles/01_vector_add.ipynb", "solution": "solutions/vector_add.py"}


def test_check_starts_its_sandboxes_before_it_imports_torch_and_triton():
    """A sandboxed worker takes seconds to import torch and triton: `check` starts its warm workers first, and
    imports them itself meanwhile (importing the command imported triton, which made the workers start 0.4 s
    late)."""
    probe = ("import sys; import grader.cli; import grader.pipeline.warm as warm\n"
             "started = []\nwarm.prestart = lambda *a, **k: started.append({'torch', 'triton'} & set(sys.modules))\n"
             "grader.cli.main(['check', 'nowhere'])\nprint(bool(started) and not any(started))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.split()[-1:] == ["True"], result.stdout + result.stderr


def test_the_command_ends_its_sandboxes_and_their_folders_as_it_exits(tmp_path):
    """The command leaves out the interpreter's teardown (cli.run): its exit handlers still run, so the warm
    workers end and their folders go, and its whole report is written."""
    import os
    import time
    env = {**os.environ, "TMPDIR": str(tmp_path), "TRITON_COURSE_CACHE": str(tmp_path / "checked")}
    done = subprocess.run([sys.executable, "-m", "grader.cli", "check", "solutions/", "--puzzle", "vector_add"],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    report = done.stdout.rstrip().splitlines()
    assert done.returncode == 0 and report[-1].startswith("Kernels ran"), done.stdout + done.stderr
    assert not list(tmp_path.glob("triton-course-warm-*"))

    def left():
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if str(tmp_path).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
        return found
    deadline = time.monotonic() + 10
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left()


def test_check_solutions_passes_with_exit_code_0(course):
    code, out, _ = run("check", "solutions/")
    assert code == 0, out
    total = sum(p.points for p in course.puzzles)
    assert f"Total: {total:g}/{total:g} points" in out


def test_check_json_shape_and_exit_code_1_on_failure():
    code, out, _ = run("check", str(BUGS / "strided_views" / "assumes_contiguous.py"), "--json", "--seed", "3")
    assert code == 1
    report = json.loads(out)
    assert set(report) == {"puzzles", "points", "max_points", "sandbox", "isolation"}
    assert report["sandbox"] in ("bubblewrap", "resource limits only")
    [puzzle] = report["puzzles"]
    assert {"id", "status", "points", "max_points", "cases", "diagnostics"} <= set(puzzle)
    assert puzzle["status"] == "fail" and puzzle["points"] == 5 and puzzle["max_points"] == 15  # contiguous only
    assert {"kind", "message"} <= set(puzzle["diagnostics"][0])
    assert "stride" in {d["kind"] for d in puzzle["diagnostics"]}
    assert {c["status"] for c in puzzle["cases"]} == {"pass", "fail"}


def test_check_selected_puzzles_only(capsys):
    assert cli.main(["check", "solutions", "--puzzle", "outer_add", "--puzzle", "vector_add", "--json"]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["puzzles"]] == ["outer_add", "vector_add"]


def test_a_lone_notebook_imports_the_py_files_beside_it_as_its_own_check_does(tmp_path, capsys):
    """The notebook's check imports the student's .py files beside it; so does `check` of that notebook (a class
    folder, where the file beside one student's is another's, is `grade`'s)."""
    (tmp_path / "helpers.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef add(x, y):\n    return x + y\n")
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    write_notebook(tmp_path / "mine.ipynb", ["from helpers import add\n" + solution.replace("x + y, mask", "add(x, y), mask")])
    assert cli.main(["check", str(tmp_path / "mine.ipynb"), "--puzzle", "vector_add", "--no-performance", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["puzzles"][0]["status"] == "pass"


@pytest.mark.parametrize("args,message", [
    (["check", "no/such/path"], "no such file or directory"),
    (["check", "solutions", "--puzzle", "sotfmax"], "no puzzle 'sotfmax'"),
    (["--course", "no.yml", "list"], "cannot read the course file"),
])
def test_bad_usage_exits_2_with_a_message(capsys, args, message):
    assert cli.main(args) == 2
    assert message in capsys.readouterr().err


def test_bad_usage_with_json_still_prints_one_json_object(capsys):
    assert cli.main(["check", "nowhere", "--json"]) == 2
    assert "no such file" in json.loads(capsys.readouterr().out)["error"]


def test_argparse_usage_errors_exit_2():
    assert run("check")[0] == 2


def test_doctor_prints_versions(capsys):
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    for name in ("python", "torch", "triton", "numpy", "gpu"):
        assert any(line.startswith(name) for line in out.splitlines()), name


@pytest.mark.parametrize("triton,numpy,warning", [
    ("3.2.0", "1.26.4", "older than 3.3: its interpreter copies non-contiguous CUDA tensors with .cpu()"),
    ("3.6.0", "2.4.1", "numpy >= 2.4 fails"),
    ("3.9.0", "2.4.1", None),
])
def test_doctor_warns_about_known_bad_versions(monkeypatch, triton, numpy, warning):
    versions = {"triton": triton, "numpy": numpy}
    real = doctor._version
    monkeypatch.setattr(doctor, "_version", lambda package: versions.get(package) or real(package))
    warnings = doctor.diagnose_environment()[1]
    if warning:
        assert any(warning in w for w in warnings), warnings
    else:
        assert warnings == []
