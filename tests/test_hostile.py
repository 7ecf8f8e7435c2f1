"""Hostile or broken submissions: each gets its verdict, the grader survives, and nothing else is touched.

The submission's code is read, not run: only triton imports, constants and @triton.jit functions reach the
sandboxed worker, and a kernel must compile for the GPU (which rejects anything but Triton) before it runs.
"""
import hashlib
import json

import pytest

from grader.settings import Settings

from conftest import ROOT, counting, grade_files

SOLUTION = (ROOT / "solutions" / "vector_add.py").read_text()
BODY_START = "    pid = tl.program_id(axis=0)\n"


def in_kernel(code):
    """The solution with `code` as the first lines of the kernel's body."""
    return SOLUTION.replace(BODY_START, "".join(f"    {line}\n" for line in code.splitlines()) + BODY_START)


def notebook_with(*cells):
    return {"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": cell} for i, cell in enumerate(cells)], "metadata": {}, "nbformat": 4,
            "nbformat_minor": 5}


TOP = "import os, sys, signal\nimport torch\n"
NO_MASK = SOLUTION.replace(", mask=mask)", ")")
# An unmasked configuration a pruner keeps off the check's launches by counting them: the grader's launches are the
# first few, a GPU's later ones would get it. `{state}` holds the count, `{count}` adds one, `{calls}` reads it.
# name: (file suffix, content, expected status, expected diagnostic kind or None)
HOSTILE = {
    "corrupt notebook": (".ipynb", '{"cells": [ this is not json', "error", "load_error"),
    "empty notebook file": (".ipynb", "", "error", "load_error"),
    "notebook with no cells": (".ipynb", json.dumps(notebook_with()), "missing", "missing"),
    "not Python at all": (".py", "this is not Python (", "error", "load_error"),
    "renamed kernel": (".py", SOLUTION.replace("def add_kernel(", "def my_add_kernel("), "missing", "missing"),
    "changed signature": (".py", SOLUTION.replace("n_elements, BLOCK_SIZE", "BLOCK_SIZE"), "error", "load_error"),
    "plain function, no @triton.jit": (".py", SOLUTION.replace("@triton.jit\n", ""), "error", "load_error"),
    "writes outside its outputs": (".py", SOLUTION.replace("tl.store(out_ptr + offsets,",
                                                           "tl.store(out_ptr + offsets + n_elements,"),
                                   "fail", "out_of_bounds"),
    "imports torch inside the kernel": (".py", in_kernel("import torch"), "fail", "compile"),
    "huge grid launched at top level": (".ipynb", json.dumps(notebook_with(
        SOLUTION, "import torch\nx = torch.ones(4)\nadd_kernel[(10 ** 9,)](x, x, x, 4, BLOCK_SIZE=1024)")),
        "pass", None),
    "reads the solutions at top level": (".ipynb", json.dumps(notebook_with(
        f"SECRET = open({str(ROOT / 'solutions' / 'vector_add.py')!r}).read()\nexec(SECRET)", NO_MASK)),
        "fail", "out_of_bounds"),
    "reads the solutions in the kernel": (".py", in_kernel(
        f"secret = open({str(ROOT / 'solutions' / 'vector_add.py')!r}).read()"), "fail", "compile"),
    "writes into the course at top level": (".py", TOP + f"open({str(ROOT / 'course.yml')!r}, 'w').write('')\n"
                                            + SOLUTION, "pass", None),
    "kills the grader at top level": (".py", TOP + "os.kill(os.getppid(), signal.SIGKILL)\n" + SOLUTION,
                                      "pass", None),
    "kills the grader from the kernel": (".py", TOP + in_kernel("os.kill(os.getppid(), 9)"), "fail", "compile"),
    "deletes the gradebook": (".py", TOP + "os.remove('gradebook.db')\n" + SOLUTION, "pass", None),
    "loops forever in the kernel": (".py", in_kernel("spin = n_elements\nwhile spin >= 0:\n    spin += 0"),
                                    "error", "timeout"),
    "memory bomb at top level": (".py", "hog = bytearray(10 ** 13)\n" + SOLUTION, "pass", None),
    "memory bomb in the kernel": (".py", in_kernel("hog = tl.zeros([1 << 26], dtype=tl.float32)"),
                                  "fail", "compile"),
    "os._exit at top level": (".py", TOP + "os._exit(0)\n" + SOLUTION, "pass", None),
    "sys.exit in the kernel": (".py", TOP + in_kernel("sys.exit(0)"), "fail", "compile"),
    "KeyboardInterrupt in the kernel": (".py", in_kernel("raise KeyboardInterrupt"), "fail", "compile"),
    "KeyboardInterrupt at top level": (".py", "raise KeyboardInterrupt\n" + SOLUTION, "pass", None),
    "segfault through ctypes in the kernel": (".py", "import ctypes\n" + in_kernel("ctypes.string_at(0)"),
                                              "fail", "compile"),
    "megabytes of printing": (".py", SOLUTION.replace("    tl.store(out_ptr", "    for _ in range(20):\n"
                                                      "        tl.device_print('spam spam spam spam', offsets)\n"
                                                      "    tl.store(out_ptr"), "pass", None),
    # The answer computed by host code from the inputs' values, handed to the kernel as a constant: a heuristic
    # sees the tensors' sizes only.
    "computes the answer on the host in a heuristic": (".py", SOLUTION.replace("@triton.jit", (
        "@triton.heuristics({'SUMS': lambda args: tuple(map(float, args['x_ptr'] + args['y_ptr']))})\n"
        "@triton.jit")).replace("BLOCK_SIZE: tl.constexpr)", "BLOCK_SIZE: tl.constexpr, SUMS: tl.constexpr)"),
        "fail", "kernel_error"),
    # A heuristic that chooses by the tensor's address: the grader has no GPU address to give it.
    "chooses by the address in a heuristic": (".py", SOLUTION.replace("@triton.jit", (
        "@triton.heuristics({'ADD': lambda args: args['x_ptr'].data_ptr() == 0})\n"
        "@triton.jit")).replace("BLOCK_SIZE: tl.constexpr)", "BLOCK_SIZE: tl.constexpr, ADD: tl.constexpr)"),
        "error", "load_error"),
    # Most of the puzzle's time limit in every case: the limit is the puzzle's, not each case's.
    "slow in every case": (".py", SOLUTION.replace("    tl.store(out_ptr", (
        "    spin = 0\n    if pid == 0:\n        for i in range(300000):\n            spin = spin + 1\n"
        "    tl.store(out_ptr")).replace("x + y, mask=mask)", "x + y + (spin - spin), mask=mask)"),
        "error", "timeout"),
    # State kept from one launch to the next in host code: a pruner the grader does not run (every configuration
    # runs on every case), or a module the grader does not grade.
    "counts launches in a list's element": (".py", counting("CALLS = [0]", "CALLS[0] += 1", "CALLS[0]"),
                                            "fail", "out_of_bounds"),
    "counts launches by appending to a module's list": (".py", counting("CALLS = []", "CALLS.append(1)",
                                                                        "len(CALLS)"), "fail", "out_of_bounds"),
    "counts launches in an alias of a module's list": (".py", counting(
        "CALLS = []", "calls = CALLS\n    calls.append(1)", "len(CALLS)"), "fail", "out_of_bounds"),
    "counts launches in an attribute of the pruner": (".py", counting(
        "", "early_config_prune.calls = getattr(early_config_prune, 'calls', 0) + 1", "early_config_prune.calls"),
        "fail", "out_of_bounds"),
    "counts launches in a mutable default": (".py", counting("", "calls = []", "len(calls)").replace(
        "named_args, **kwargs):\n    calls = []", "named_args, calls=[], **kwargs):\n    calls.append(1)"),
        "fail", "out_of_bounds"),
    "counts launches with += on a mutable default": (".py", counting("", "calls += [1]", "len(calls)").replace(
        "named_args, **kwargs):", "named_args, calls=[], **kwargs):"), "error", "load_error"),
    "counts launches with += on an alias of a module's list": (".py", counting(
        "CALLS = []", "calls = CALLS\n    calls += [1]", "len(CALLS)"), "error", "load_error"),
    "counts launches with |= on an alias of a module's set": (".py", counting(
        "CALLS = set()", "calls = CALLS\n    calls |= {len(calls)}", "len(CALLS)"), "error", "load_error"),
    # A pruner also made a kernel by triton.jit(pruner), named in a branch of the kernel that never runs: its body
    # must still be checked as the host code it is too.
    "counts launches in a pruner also made a kernel": (".py", counting(
        "CALLS = []", "calls = CALLS\n    calls += [1]", "len(CALLS)").replace(
        "named_args, **kwargs):", "named_args):").replace(
        "return [config for config in configs if config.kwargs[\"MASKED\"] or len(CALLS) > 1000]",
        "return configs if len(CALLS) > 1000 else configs[:1]").replace(
        "\n\n@triton.autotune", "\n\n_never = triton.jit(early_config_prune)\n\n\n@triton.autotune").replace(
        "    mask = offsets", "    if BLOCK_SIZE == 7:\n        _never(x_ptr, y_ptr)\n    mask = offsets"),
        "error", "load_error"),
    "counts compiles in a compile-time helper's list default, with no pruner": (".py", SOLUTION.replace(
        "@triton.autotune(", "@triton.constexpr_function\ndef calls(seen=[]):\n    seen += [0]\n    return len(seen)"
        "\n\n\n@triton.autotune(").replace("    pid = ", "    N: tl.constexpr = calls()\n    pid = "), "error", "load_error"),
    # The guard's refusal inside a compile is the kernel's error at the line of the `+=`, not the compiler's.
    "counts compiles in a module's list through a compile-time helper": (".py", SOLUTION.replace(
        "@triton.autotune(", "SEEN = []\n\n\n@triton.constexpr_function\ndef calls():\n    seen = SEEN\n"
        "    seen += [0]\n    return len(seen)\n\n\n@triton.autotune(").replace("    pid = ", "    N: tl.constexpr = calls()\n    pid = "),
        "fail", "kernel_error"),
    # On a GPU, y *= 0 in the pruner zeroes the launch's y: the kernel's output is x alone.
    "zeroes an input in its pruner": (".py", counting("", "y = named_args['y_ptr']\n    y *= 0", "0"),
                                      "error", "load_error"),
    "counts launches with a module's iterator": (".py", counting("CALLS = iter(range(10 ** 9))", "n = next(CALLS)",
                                                                 "n"), "error", "load_error"),
    "counts launches with a generator a function made": (".py", counting(
        "def counter():\n    return (n for n in range(10 ** 9))\n\n\nCALLS = counter()", "n = next(CALLS)", "n"),
        "error", "load_error"),
    "counts launches with an iterator in a tuple": (".py", counting(
        "CALLS = (map(int, range(10 ** 9)),)", "n = next(CALLS[0])", "n"), "error", "load_error"),
    "counts launches with an iterator as a default": (".py", counting("", "n = next(calls)", "n").replace(
        "named_args, **kwargs):", "named_args, calls=iter(range(10 ** 9)), **kwargs):"), "error", "load_error"),
    "counts launches in the order a module's list is sorted": (".py", counting(
        "BITS = ([0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1])",
        "n = sum(bit[0] << k for k, bit in enumerate(BITS))\n"
        "    for k, bit in enumerate(BITS):\n        bit.sort(reverse=bool(((n + 1) >> k) & 1))", "n"),
        "fail", "out_of_bounds"),
    "counts launches with an iterator in a set": (".py", counting(
        "CALLS = {iter(range(10 ** 9))}", "n = next(next(iter(CALLS)))", "n"), "error", "load_error"),
    "counts launches with an iterator in a configuration": (".py", counting(
        "CALLS = triton.Config({'N': iter(range(10 ** 9))})", "n = next(CALLS.kwargs['N'])", "n"),
        "error", "load_error"),
    "counts launches in a helper's list default": (".py", counting(
        "@triton.constexpr_function\ndef calls(seen=[]):\n    seen += [0]\n    return len(seen)", "n = calls()", "n"),
        "error", "load_error"),
    "counts launches in a comprehension's name for a module's list": (".py", counting(
        "CALLS = []", "kept = []\n    [kept.append(0) for kept in [CALLS]]", "len(CALLS)"), "fail", "out_of_bounds"),
    "raises when its module runs": (".py", counting("def broken():\n    return 1 // 0\n\n\nCALLS = broken()",
                                                    "n = CALLS", "n"), "error", "load_error"),
    "monkeypatches torch": (".py", "import torch\ntorch.isclose = lambda *a, **k: torch.tensor(True)\n" + NO_MASK,
                            "fail", "out_of_bounds"),
    "monkeypatches the grader": (".py", "import grader.pipeline.compare\ngrader.compare.compare = lambda *a, **k: []\n"
                                 + NO_MASK, "fail", "out_of_bounds"),
}


def _fingerprint(paths):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def verdicts(course, tmp_path_factory):
    directory = tmp_path_factory.mktemp("hostile")
    (directory / "gradebook.db").write_text("grades of the whole class")
    files = {}
    for index, (name, (suffix, content, _, _)) in enumerate(HOSTILE.items()):
        path = directory / f"submission_{index}{suffix}"
        path.write_text(content)
        files[name] = ("vector_add", path)
    protected = [ROOT / "course.yml", *sorted((ROOT / "solutions").glob("*.py"))]
    before = _fingerprint(protected)
    results = grade_files(course, files, Settings(puzzle_timeout_s=15))
    assert _fingerprint(protected) == before, "the course and its solutions are intact"
    assert (directory / "gradebook.db").read_text() == "grades of the whole class"
    return results


def test_the_suite_is_large_enough():
    assert len(HOSTILE) >= 20


@pytest.mark.parametrize("name", list(HOSTILE))
def test_each_hostile_submission_gets_its_verdict(verdicts, name):
    _, _, status, kind = HOSTILE[name]
    result = verdicts[name]
    assert result.status == status, [(d.kind, d.message) for d in result.diagnostics]
    if kind:
        assert kind in {d.kind for d in result.diagnostics}, [(d.kind, d.message) for d in result.diagnostics]
    if name != "not Python at all":  # a submission this file mistyped would pass the error cases for nothing
        assert not any("SyntaxError" in d.message for d in result.diagnostics), result.diagnostics
