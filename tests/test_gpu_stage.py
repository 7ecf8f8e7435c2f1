"""The GPU stage: configuration checks, the physical floor, the ranking and the page on the CPU; on a GPU,
the reference kernels and submissions that try the leaderboard tricks (skipped where there is no GPU)."""
import json
import math
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

from grader.gpu.bench import bench_submission, rates, written_bytes
from grader.pipeline.configs import read_configs, validate_configs
from grader.gpu.leaderboard import ranking, write_leaderboard
from grader.gpu.timing import floor_seconds, peaks, summary
from grader.pipeline.load import SubmissionError, load_submission
from grader.pipeline.protocol import MalformedResult
from grader.pipeline.sandbox import sandbox_kind
from grader.pipeline.worker import KernelModules

from conftest import BUGS, ROOT, counting

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (run through the device)")


def configs_of(path, course, puzzle_id, tmp_path, target=90):
    """The configurations the compile sandbox reads from a submission: its rebuilt modules executed (here, in
    the test's process), then the configurations' expression evaluated in them."""
    source = load_submission(path, course, [puzzle_id])[puzzle_id].source
    modules = KernelModules(source.modules, tmp_path, f"configs_{puzzle_id}")
    modules.load()
    if source.configs is None:
        return source, []
    return source, read_configs(source.configs, modules.loaded[source.configs_module].__dict__,
                                [source.kernel, course.puzzle(puzzle_id).kernel], target)


def test_autotune_configs_are_read_apart_from_the_kernel(course, tmp_path):
    source, configs = configs_of(ROOT / "solutions" / "matmul.py", course, "matmul", tmp_path)
    assert configs[0] == {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, "num_warps": 8, "num_stages": 3}
    assert "autotune" not in source.module, "the CPU worker's module has no @triton.autotune"
    valid, problems = validate_configs(course.puzzle("matmul"), configs, source.params)
    assert valid == [{**config, "constants": {}} for config in configs] and problems == []


@pytest.mark.slow
def test_the_gpu_stage_compiles_each_configuration_with_its_own_constants(course, tmp_path):
    """A kernel parameter its tuning configurations give unlike (GROUP_M 8, then 4) is compiled, for each timed
    launch, with the value of that launch's configuration, not the first's."""
    from grader.gpu.bench import compile_job
    from grader.gpu.compile_worker import compile_puzzle
    path = ROOT / "tests" / "alternatives" / "matmul" / "group_size_tuned_per_config.py"
    source, configs = configs_of(path, course, "matmul", tmp_path)
    puzzle = course.puzzle("matmul")
    job = compile_job(puzzle, source)
    job["timed"] = True
    sizes = puzzle.benchmark.sizes
    outcome = compile_puzzle(job, course, 90, tmp_path)
    assert not outcome["problems"], outcome["problems"]
    given = [config["kwargs"]["GROUP_M"] for config in configs]
    assert len(set(given)) == 2
    for size in range(len(sizes)):
        assert [outcome["compiled"][f"time-{size}-{c}"]["scalars"]["GROUP_M"] for c in range(len(configs))] == given


def compiled_for_the_gpu(course, path, puzzle_id, tmp_path):
    """(the puzzle with its configuration cases, the kernel's source, the verification payloads, the compile
    sandbox's outcome as the grader checks it) of the kernel in `path`, compiled for sm_90 in the test's process."""
    from grader.gpu.bench import _check_compiled, compile_job
    from grader.gpu.compile_worker import compile_puzzle
    from grader.pipeline.cases import make_case
    from grader.pipeline.protocol import case_payload
    source = load_submission(path, course, [puzzle_id])[puzzle_id].source
    puzzle = source.with_configuration_cases(course.puzzle(puzzle_id))
    payload = [case_payload(puzzle, make_case(puzzle, i)) for i in range(len(puzzle.cases))]
    job = compile_job(puzzle, source, payload)
    tmp_path.mkdir()
    return puzzle, source, payload, _check_compiled(compile_puzzle(job, course, 90, tmp_path), job)


@pytest.mark.slow
def test_the_gpu_stage_launches_only_what_the_kernels_pruner_keeps(course, tmp_path):
    """As Triton's autotuner: each case's launch compiled with the first configuration the kernel's
    early_config_prune keeps for it (the masked one on a ragged size), a configuration case whose blocks it keeps
    off not compiled (as the CPU check does not run it), and at the benchmark's size only the configurations it
    keeps there compiled and timed."""
    from grader.gpu.bench import _compile_verdict
    alternatives = ROOT / "tests" / "alternatives" / "vector_add"
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, alternatives / "pruned_unmasked_config.py",
                                                            "vector_add", tmp_path / "masked")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    ragged = [i for i, spec in enumerate(puzzle.cases) if spec.symbols["N"] % 4096]
    assert ragged and all(outcome["compiled"][f"verify-{i}-0"]["scalars"]["MASKED"] is True for i in ragged)
    assert outcome["kept"] == [[0, 1]], "the benchmark's vector is a whole number of blocks: both are timed"

    puzzle, source, payload, outcome = compiled_for_the_gpu(
        course, alternatives / "pruned_unmasked_at_its_own_block.py", "vector_add", tmp_path / "own_block")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    (kept_off,) = outcome["pruned"]
    assert puzzle.cases[kept_off].symbols["BLOCK_SIZE"] == 128 and "early_config_prune" in outcome["pruned"][kept_off]
    assert not any(key.startswith(f"verify-{kept_off}-") for key in outcome["compiled"])

    puzzle, source, payload, outcome = compiled_for_the_gpu(
        course, alternatives / "pruned_short_offsets_off_long_vectors.py", "vector_add", tmp_path / "short")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    assert outcome["kept"] == [[0]] and "time-0-1" not in outcome["compiled"]
    assert outcome["compiled"]["time-0-0"]["scalars"]["SHORT"] is False

    # A pruner asking torch for the GPU's SMs is told the GPU stage's (the sandbox has no GPU): on a ragged case it
    # keeps the masked configurations, on one its block divides and at the benchmark's size the unmasked ones.
    puzzle, source, payload, outcome = compiled_for_the_gpu(
        course, alternatives / "pruned_by_the_gpus_sms.py", "vector_add", tmp_path / "sms")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    launched = {i: outcome["compiled"][f"verify-{i}-0"]["scalars"] for i in range(len(puzzle.cases))}
    assert {scalars["EVEN"] for scalars in launched.values()} == {True, False}
    assert all(scalars["EVEN"] == (scalars["n_elements"] % scalars["BLOCK_SIZE"] == 0) for scalars in launched.values())
    assert outcome["kept"] == [[0, 2]]
    assert {outcome["compiled"][f"time-0-{c}"]["scalars"]["EVEN"] for c in (0, 2)} == {True}


def test_a_pruner_keeps_the_configuration_it_returns_even_one_alike_but_for_its_stages():
    """Configurations that differ in num_stages or num_warps alone (one needing more shared memory than the GPU
    has): the one the pruner returns is the one launched, as Triton's autotuner launches what it returns."""
    import triton

    from grader.pipeline.configs import kept_indices
    configs = [triton.Config({"BLOCK_SIZE": 1024}, num_stages=8), triton.Config({"BLOCK_SIZE": 1024}, num_stages=3)]
    params = ["x_ptr", "n_elements", "BLOCK_SIZE"]
    assert kept_indices((configs, lambda given, named: given[1:]), params, [None, 4096]) == [1]
    fresh = lambda given, named: [triton.Config({"BLOCK_SIZE": 1024}, num_stages=3)]  # noqa: E731
    assert kept_indices((configs, fresh), params, [None, 4096]) == [1]
    other_warps = lambda given, named: [triton.Config({"BLOCK_SIZE": 1024}, num_warps=2)]  # noqa: E731
    assert kept_indices((configs, other_warps), params, [None, 4096]) == [0], "the first with its constants"


@pytest.mark.slow
def test_the_gpu_stage_runs_a_case_again_with_each_configuration_its_pruner_keeps(course, tmp_path):
    """As the CPU check: a case runs again with another configuration's constants where the pruner keeps it for a
    launch (the autotuner may launch it there), the other launches with their first kept; here only the second
    launch of a split case keeps the wrong fast configuration."""
    from grader.gpu.bench import _compile_verdict
    path = BUGS / "strided_views" / "fast_config_pruned_in_for_one_launch.py"
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, path, "strided_views", tmp_path / "compiled")
    assert _compile_verdict(puzzle, source, outcome, payload, False) is None
    assert source.variants == ({"FAST": True},)
    again = [i for i in range(len(payload)) if outcome["variants"][i] == [True]]
    assert again and all(len(payload[i]["launches"]) == 2 for i in again), "split cases only (N=32 the second)"
    for i in again:
        assert [outcome["compiled"][f"verify-{i}-{launch}-0"]["scalars"]["FAST"] for launch in (0, 1)] == [False, True]


@pytest.mark.slow
def test_each_case_runs_first_with_the_first_configurations_constants_the_pruner_keeps(course, tmp_path):
    """The order a pruner returns the configurations in is not the order the cases take them in: first the first
    configuration's constants it keeps (here the unmasked one, wrong on ragged sizes), then each other's, as on the
    CPU."""
    path = tmp_path / "vector_add.py"
    path.write_text((ROOT / "tests" / "alternatives" / "vector_add" / "pruned_unmasked_config.py").read_text()
                    .replace("    return [config for config in configs if config.kwargs[\"MASKED\"] or whole]",
                             "    return list(reversed(configs))"))
    assert "reversed" in path.read_text()
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, path, "vector_add", tmp_path / "compiled")
    for i in range(len(payload)):
        assert outcome["compiled"][f"verify-{i}-0"]["scalars"]["MASKED"] is False
        assert outcome["variants"][i] == [True] and outcome["compiled"][f"verify-{i}-0-0"]["scalars"]["MASKED"] is True


@pytest.mark.slow
def test_a_heuristic_above_the_autotuner_leaves_the_configurations_blocks_as_they_are(course, tmp_path):
    """The parameter a @triton.heuristics adds is not one of a configuration's blocks: the configuration case at the
    unmasked configuration's blocks is kept off a ragged size on the GPU as on the CPU, and the first
    configuration's constants (the kernel's defaults, as such a heuristic sees them) only where the pruner keeps
    it."""
    from grader.gpu.bench import _compile_verdict
    path = ROOT / "tests" / "alternatives" / "vector_add" / "pruned_with_a_heuristic_above_the_autotuner.py"
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, path, "vector_add", tmp_path / "compiled")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    (kept_off,) = outcome["pruned"]
    assert puzzle.cases[kept_off].symbols["BLOCK_SIZE"] == 128
    assert source.tuned == {} and source.variants == ({"MASKED": True},)
    for i, spec in enumerate(puzzle.cases):
        if i != kept_off and spec.symbols["N"] % spec.symbols["BLOCK_SIZE"]:
            assert outcome["compiled"][f"verify-{i}-0"]["scalars"]["MASKED"] is True, spec.name


@pytest.mark.slow
def test_a_configuration_that_leaves_a_constant_out_is_compiled_with_the_kernels_default(course, tmp_path):
    """A configuration without MASKED launches the kernel with its default (on): where the pruner keeps only that one
    (a ragged size) the case's launch is compiled with MASKED=True, and the cases run again with it only where the
    unmasked configuration is kept too, as on the CPU."""
    from grader.gpu.bench import _compile_verdict
    path = ROOT / "tests" / "alternatives" / "vector_add" / "pruned_unmasked_config_beside_the_default.py"
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, path, "vector_add", tmp_path / "compiled")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    assert source.tuned == {"MASKED": False} and source.variants == ({"MASKED": True},)
    for i, spec in enumerate(puzzle.cases):
        if spec.symbols["N"] % 4096:
            assert outcome["compiled"][f"verify-{i}-0"]["scalars"]["MASKED"] is True, spec.name
            assert outcome["variants"][i] == [False], spec.name
    assert outcome["kept"] == [[0, 1]] and outcome["compiled"]["time-0-1"]["scalars"]["MASKED"] is True


@pytest.mark.slow
def test_a_heuristic_above_the_autotuner_never_sees_a_configurations_constants(course, tmp_path):
    """As Triton runs it, before the autotuner adds a configuration's constants: one that reads CHUNK raises (the
    compiler is given no binary to make), one that falls back to 256 counts chunks of 256 with CHUNK=128 too."""
    from grader.gpu.bench import _compile_verdict
    puzzle, source, payload, outcome = compiled_for_the_gpu(
        course, BUGS / "softmax" / "heuristic_above_the_autotuner.py", "softmax", tmp_path / "raises")
    verdict = _compile_verdict(puzzle, source, outcome, payload, True)
    assert verdict["status"] == "fail" and "KeyError: 'CHUNK'" in verdict["reason"], verdict
    puzzle, source, payload, outcome = compiled_for_the_gpu(
        course, BUGS / "softmax" / "heuristic_above_the_autotuner_defaults_a_chunk.py", "softmax", tmp_path / "falls")
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    assert source.unseen_by_heuristics == ("CHUNK",) and source.variants == ({"CHUNK": 128},)
    for i, spec in enumerate(puzzle.cases):
        scalars = outcome["compiled"][f"verify-{i}-0-0"]["scalars"]
        assert scalars["CHUNK"] == 128 and scalars["NUM_CHUNKS"] == max(1, spec.symbols["BLOCK_N"] // 256), spec.name


@pytest.mark.slow
def test_a_default_written_in_tl_constexpr_crosses_the_compile_sandboxs_boundary_as_plain_data(course, tmp_path):
    """MASKED: tl.constexpr = MASK_ON, MASK_ON = tl.constexpr(True): the compiled launches' constants are plain values
    (the grader reads the sandbox's answer as data only; a tl.constexpr made the answer unreadable, an error), and
    the configuration that leaves MASKED out is matched to its launches by that value."""
    import io

    from grader.gpu.bench import _check_compiled, _compile_verdict, compile_job
    from grader.gpu.compile_worker import compile_puzzle
    puzzle, source, payload, _ = compiled_for_the_gpu(
        course, BUGS / "vector_add" / "unmasked_config_beside_a_module_constant_default.py", "vector_add",
        tmp_path / "compiled")
    job = compile_job(puzzle, source, payload)
    saved = io.BytesIO()
    torch.save(compile_puzzle(job, course, 90, tmp_path / "compiled"), saved)
    saved.seek(0)
    outcome = _check_compiled(torch.load(saved, weights_only=True), job)
    assert _compile_verdict(puzzle, source, outcome, payload, True) is None
    assert outcome["compiled"]["verify-0-0"]["constexprs"]["MASKED"] is True
    assert outcome["compiled"]["verify-0-0-0"]["constexprs"]["MASKED"] is False


STOPPING_MODULES = {  # as test_hostile's: a module the sandbox cannot run, or one holding state for its pruner
    "raises": ("def broken():\n    return 1 // 0\n\n\nCALLS = broken()", "CALLS",
               "stopped at {name} line 5: return 1 // 0\nZeroDivisionError"),
    "holds an iterator": ("CALLS = iter(range(10 ** 6))", "next(CALLS)",
                          "stopped at {name} line 4: CALLS = iter(range(10 ** 6))\nCALLS is an iterator"),
    "zeroes an input": ("", "0", "stopped at {name} line 9: y *= 0\nits early_config_prune, run for a case's launch: "
                                 "`y *= ...` would change the Tensor `y` holds in place"),
}


@pytest.mark.parametrize("module", STOPPING_MODULES)
def test_the_compile_sandbox_stops_where_the_cpu_worker_does(course, tmp_path, module):
    """A module that raises, or holds state its pruner could keep from one launch to the next, is the same error
    in the GPU stage (bench, inspect) as in the CPU check, naming the line: not the compile sandbox's traceback."""
    from grader.gpu.bench import _compile_verdict
    from grader.gpu.inspection import inspect_kernel
    from grader.pipeline.grade import grade_submission
    state, calls, expected = STOPPING_MODULES[module]
    path = tmp_path / "stopping.py"
    path.write_text(counting(state, "y = named_args['y_ptr']\n    y *= 0" if module == "zeroes an input" else "pass",
                             calls))
    expected = expected.format(name=path.name)
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, path, "vector_add", tmp_path / "compiled")
    verdict = _compile_verdict(puzzle, source, outcome, payload, True)
    assert verdict["status"] == "error" and expected in verdict["reason"], verdict
    (checked,) = grade_submission(course, path, ["vector_add"]).puzzles
    assert checked.status == "error" and checked.diagnostics[0].message == verdict["reason"]
    with pytest.raises(SubmissionError, match=re.escape(f"vector_add: {verdict['reason']}")):
        inspect_kernel(course, path, "vector_add", 90)


def test_a_compile_time_helpers_refusal_is_where_it_was_written_not_the_compilers(course, tmp_path):
    """A @triton.constexpr_function that appends to a module's list (state kept from one compile to the next) is
    stopped by the grader's guard as Triton traces the kernel: the GPU stage names the line, as the CPU check does,
    and does not say the GPU compiler rejects the kernel."""
    from grader.gpu.bench import _compile_verdict
    from grader.gpu.inspection import inspect_kernel
    from grader.pipeline.grade import grade_submission
    path = tmp_path / "helper_appends.py"
    path.write_text((ROOT / "solutions" / "vector_add.py").read_text().replace(
        "# Block sizes", "SEEN = []\n\n\n@triton.constexpr_function\ndef calls():\n    seen = SEEN\n"
        "    seen += [0]\n    return len(seen)\n\n\n# Block sizes").replace(
        "    pid = ", "    N: tl.constexpr = calls()\n    pid = "))
    told = ("add_kernel's host code stopped at helper_appends.py line 12: seen += [0]\n"
            "a @triton.constexpr_function it calls, run as it compiled: `seen += ...` would change the list `seen` "
            "holds in place")
    puzzle, source, payload, outcome = compiled_for_the_gpu(course, path, "vector_add", tmp_path / "compiled")
    verdict = _compile_verdict(puzzle, source, outcome, payload, True)
    assert verdict["status"] == "error" and verdict["reason"].startswith(told), verdict
    with pytest.raises(SubmissionError, match=re.escape(told)):
        inspect_kernel(course, path, "vector_add", 90)
    (checked,) = grade_submission(course, path, ["vector_add"]).puzzles
    assert checked.status == "fail" and "raised at helper_appends.py line 12: seen += [0]" in \
        checked.diagnostics[0].message


@pytest.mark.parametrize("raised, malformed", [
    ({"message": "ValueError", "module": "elsewhere", "line": 3}, "the module that raised is unknown"),
    ({"message": "ValueError", "module": "<main>", "line": "3"}, "a line is not a number"),
    ("ValueError", "not a mapping"),
])
def test_what_the_compile_sandbox_says_stopped_the_module_is_checked(course, raised, malformed):
    from grader.gpu.bench import _check_compiled, compile_job
    source = load_submission(ROOT / "solutions" / "vector_add.py", course, ["vector_add"])["vector_add"].source
    with pytest.raises(MalformedResult, match=malformed):
        _check_compiled({"module_raised": raised}, compile_job(course.puzzle("vector_add"), source))


@pytest.mark.parametrize("kernel, kept, pruned, message", [
    ("solutions/vector_add.py", [[0]], {}, "configurations kept off where the kernel has no pruner"),
    ("solutions/vector_add.py", [[0, 1]], {8: "kept off"}, "that the kernel's pruner cannot keep off"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", [[0, 5]], {}, "not the kernel's"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", [[]], {}, "none, or not the kernel's"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", [[0, 0, 1]], {}, "not the kernel's"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", None, {}, "not given for each benchmark size"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", [[0], [1]], {}, "not given for each benchmark size"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", [[0, 1]], {0: "kept off"},
     "that the kernel's pruner cannot keep off"),
    ("tests/alternatives/vector_add/pruned_unmasked_config.py", [[0, 1]], {}, "are malformed"),
    ("unpruned", [[0, 1]], {}, "left out where the kernel has no pruner"),
])
def test_what_the_compile_sandbox_says_it_pruned_is_checked(course, tmp_path, kernel, kept, pruned, message):
    """The compile sandbox runs the submission's code: what it says its pruner kept is data, taken only where a
    pruner could have said it (a kernel without one keeps everything and verifies every case; one with a pruner
    leaves only configuration cases unverified, and times one configuration at least)."""
    from grader.gpu.bench import _compile_verdict
    from grader.pipeline.cases import make_case
    from grader.pipeline.protocol import case_payload
    if kernel == "unpruned":  # MASKED False, then True: every case runs again with True
        kernel = tmp_path / "vector_add.py"
        kernel.write_text((ROOT / "tests" / "alternatives" / "vector_add" / "pruned_unmasked_config.py").read_text()
                          .replace(', prune_configs_by={"early_config_prune": unmasked_only_for_whole_blocks}', ""))
    source = load_submission(ROOT / kernel, course, ["vector_add"])["vector_add"].source
    puzzle = source.with_configuration_cases(course.puzzle("vector_add"))
    assert puzzle.cases[8].name.endswith("(blocks BLOCK_SIZE=1024)"), "case 8 is a configuration case"
    payload = [case_payload(puzzle, make_case(puzzle, i)) for i in range(len(puzzle.cases))]
    extra = {"MASKED": True} if source.variants else {}
    configs = [{"kwargs": {"BLOCK_SIZE": block, **extra}, "num_warps": 4} for block in (1024, 2048)]
    again = {i: [True] * len(source.variants) for i in range(len(payload))}  # with the other configuration's MASKED
    if message == "left out where the kernel has no pruner":
        again[0] = [False] * len(source.variants)
    if message == "are malformed":
        again[0] = again[0] + [True]
        again["0"] = again[0]
    outcome = {"configs": configs, "compiled": {}, "problems": {}, "kept": kept, "pruned": pruned, "variants": again}
    verdict = _compile_verdict(puzzle, source, outcome, payload, True)
    assert verdict["status"] == "error" and "malformed" in verdict["reason"] and message in verdict["reason"], verdict


@pytest.mark.parametrize("path", ["matmul/tutorial03_grouped_ordering.py", "matmul/autotune_comprehension_tl_range.py"])
def test_configs_name_the_kernels_parameters_as_the_student_does(course, tmp_path, path):
    """Triton's tutorial tunes BLOCK_SIZE_M, another kernel BM: each is the course's BLOCK_M by position, and the
    configurations come back in the course's names, as every launch binds them."""
    source, configs = configs_of(ROOT / "tests" / "alternatives" / path, course, "matmul", tmp_path)
    valid, problems = validate_configs(course.puzzle("matmul"), configs, source.params)
    assert problems == [] and len(valid) == len(configs) > 1
    assert all(set(config["kwargs"]) == {"BLOCK_M", "BLOCK_N", "BLOCK_K"} for config in valid)
    own = source.params[-3:]
    assert [[c["kwargs"][k] for k in own] for c in configs] == \
        [[c["kwargs"][k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")] for c in valid]


@pytest.mark.parametrize("groups", [(8, 8), (8, 4)])
def test_a_parameter_only_the_configurations_give_takes_each_ones_value(course, tmp_path, grade, groups):
    """Triton's tutorial 03 as written: GROUP_SIZE_M is a kernel parameter that only its configurations give (a
    function returns them). It was refused for a parameter the grader does not pass; the first configuration's
    value is written as its default, and where another configuration gives another value every case runs again
    with it (a correct kernel passes with each). Each configuration keeps its own value for the GPU stage."""
    tutorial = (ROOT / "tests" / "alternatives" / "matmul" / "tutorial03_grouped_ordering.py").read_text()
    tutorial = tutorial.replace("GROUP_SIZE_M = tl.constexpr(8)\n", "").replace(
        "BLOCK_SIZE_K: tl.constexpr,  #\n", "BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,  #\n")
    first, other = groups
    tutorial = tutorial.replace("'BLOCK_SIZE_K': 64}, num_stages=3", f"'BLOCK_SIZE_K': 64, 'GROUP_SIZE_M': {first}}}, num_stages=3")
    tutorial = tutorial.replace("'BLOCK_SIZE_K': 32}, num_stages=4, num_warps=4)",
                                f"'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': {other}}}, num_stages=4, num_warps=4)")
    tutorial = tutorial.replace("'BLOCK_SIZE_K': 32}, num_stages=5, num_warps=2)",
                                f"'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': {first}}}, num_stages=5, num_warps=2)")
    assert tutorial.count("GROUP_SIZE_M': ") == 8
    path = tmp_path / "matmul.py"
    path.write_text(tutorial)
    result = grade(path).puzzle("matmul")
    assert result.status == "pass", [d.message for d in result.diagnostics]
    source, configs = configs_of(path, course, "matmul", tmp_path)
    assert "GROUP_SIZE_M: tl.constexpr=8" in source.module.replace(" = ", "=")
    valid, problems = validate_configs(course.puzzle("matmul"), configs, source.params)
    assert all(set(config["kwargs"]) == {"BLOCK_M", "BLOCK_N", "BLOCK_K"} for config in valid)
    assert (len(valid), problems) == (len(configs), [])
    assert [config["constants"] for config in valid] == [{"GROUP_SIZE_M": c["kwargs"]["GROUP_SIZE_M"]} for c in configs]
    assert {config["constants"]["GROUP_SIZE_M"] for config in valid} == {first, other}


def test_gpu_configs_declared_beside_the_kernel_leave_it_untouched(course, tmp_path):
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    plain = solution[:solution.index("@triton.autotune")] + solution[solution.index("@triton.jit"):]
    path = tmp_path / "vector_add.py"
    path.write_text(plain + textwrap.dedent("""
        GPU_CONFIGS = [triton.Config({"BLOCK_SIZE": 2048}, num_warps=8), triton.Config({"BLOCK_SIZE": 4096})]
        """))
    source, configs = configs_of(path, course, "vector_add", tmp_path)
    assert configs == [{"kwargs": {"BLOCK_SIZE": 2048}, "num_warps": 8, "num_stages": 3},
                       {"kwargs": {"BLOCK_SIZE": 4096}, "num_warps": 4, "num_stages": 3}]
    assert "GPU_CONFIGS" not in source.module and "autotune" not in source.module
    # A kernel's own @triton.autotune comes first; any expression the load stage accepts can build them.
    path.write_text(solution + "\nGPU_CONFIGS = [triton.Config({'BLOCK_SIZE': 64})]\n")
    assert configs_of(path, course, "vector_add", tmp_path)[1][0]["kwargs"] == {"BLOCK_SIZE": 1024}
    path.write_text(plain + "\nBLOCKS = (64, 128)\nGPU_CONFIGS = [triton.Config({'BLOCK_SIZE': b}) for b in BLOCKS]\n")
    assert [c["kwargs"] for c in configs_of(path, course, "vector_add", tmp_path)[1]] == [
        {"BLOCK_SIZE": 64}, {"BLOCK_SIZE": 128}]
    path.write_text(plain + "\nimport torch\nGPU_CONFIGS = [triton.Config({'BLOCK_SIZE': torch.cuda.memory_allocated()})]\n")
    source = load_submission(path, course, ["vector_add"])["vector_add"].source
    assert source.configs is None and "torch" in source.config_problems[0]


def test_configs_may_ask_which_gpu_they_are_for_as_the_tutorials_do(course, tmp_path):
    """Tutorial 03 picks its list with is_cuda() (the active driver's target): the sandbox has no GPU, or not
    the one compiled for, and answers for the target; the rest of triton.runtime stays out of reach."""
    path = ROOT / "tests" / "alternatives" / "online_softmax" / "backend_dependent_configs.py"
    source, configs = configs_of(path, course, "online_softmax", tmp_path)
    assert source.config_problems == () and len(configs) == 4 and {c["num_stages"] for c in configs} == {2, 3}
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    plain = solution[:solution.index("@triton.autotune")] + solution[solution.index("@triton.jit"):]
    asks_arch = tmp_path / "vector_add.py"
    asks_arch.write_text(plain + textwrap.dedent("""
        def blocks():
            return [4096] if triton.runtime.driver.active.get_current_target().arch >= 90 else [1024]
        GPU_CONFIGS = [triton.Config({"BLOCK_SIZE": b}) for b in blocks()]
        """))
    assert configs_of(asks_arch, course, "vector_add", tmp_path, 90)[1][0]["kwargs"] == {"BLOCK_SIZE": 4096}
    assert configs_of(asks_arch, course, "vector_add", tmp_path, 80)[1][0]["kwargs"] == {"BLOCK_SIZE": 1024}
    asks_more = tmp_path / "vector_add.py"
    asks_more.write_text(plain + "\nGPU_CONFIGS = [triton.Config({'BLOCK_SIZE': triton.runtime.jit.JITFunction})]\n")
    assert "triton.runtime has no `jit`" in \
        load_submission(asks_more, course, ["vector_add"])["vector_add"].source.config_problems[0]
    asks_more.write_text(plain + "\nGPU_CONFIGS = [triton.Config({}, num_warps=triton.runtime.driver.set_active)]\n")
    assert "set_active" in load_submission(asks_more, course, ["vector_add"])["vector_add"].source.config_problems[0]


@pytest.mark.parametrize("expression", [
    "list(filter(keep, [triton.Config({'BLOCK_SIZE': b}, num_warps=w) for b in (512, 2048) for w in (4, 8)]))",
    "[triton.Config({'BLOCK_SIZE': b}, num_warps=w) for b, w in itertools.product((512, 2048), (4, 8)) if keep_pair(b, w)]",
    "list(map(config, [512, 2048]))",
    "[next(iter(map(config, [512]))), config(2048)]",
])
def test_configs_may_be_built_as_python_builds_lists(course, tmp_path, expression):
    """Triton's attention tutorial keeps the configurations a function of its own accepts (filter); others build
    them with itertools.product, map or next: plain Python over plain data, read in the sandbox like the rest."""
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    plain = solution[:solution.index("@triton.autotune")] + solution[solution.index("@triton.jit"):]
    path = tmp_path / "vector_add.py"
    path.write_text("import itertools\n" + plain + textwrap.dedent("""
        def keep(conf):
            return conf.num_warps == 4


        def keep_pair(block, warps):
            return warps == 4


        def config(block):
            return triton.Config({"BLOCK_SIZE": block}, num_warps=4)


        """) + f"GPU_CONFIGS = {expression}\n")
    source, configs = configs_of(path, course, "vector_add", tmp_path)
    assert source.config_problems == ()
    assert configs == [{"kwargs": {"BLOCK_SIZE": b}, "num_warps": 4, "num_stages": 3} for b in (512, 2048)]
    if "itertools" in expression:  # its combinators, nothing else of it
        path.write_text(path.read_text().replace("itertools.product", "itertools.tee"))
        refused = load_submission(path, course, ["vector_add"])["vector_add"].source.config_problems
        assert "itertools has no `tee`" in refused[0]


def test_the_tutorials_filtered_attention_configs_are_read(course, tmp_path):
    source, configs = configs_of(ROOT / "tests" / "alternatives" / "attention" / "tutorial_fused_attention.py",
                                 course, "attention", tmp_path)
    assert source.config_problems == () and len(configs) == 12  # of 24: none of 8 warps on tiles under 128x128
    assert not any(c["num_warps"] == 8 and c["kwargs"]["BLOCK_M"] * c["kwargs"]["BLOCK_N"] < 128 * 128
                   for c in configs)


def test_gpu_configs_for_a_file_of_several_puzzles_are_keyed_by_kernel(course, tmp_path):
    def plain(solution):
        source = (ROOT / "solutions" / solution).read_text()
        return source[:source.index("@triton.autotune")] + source[source.index("@triton.jit"):]

    path = tmp_path / "kernels.py"
    path.write_text(plain("vector_add.py") + plain("softmax.py") + textwrap.dedent("""
        GPU_CONFIGS: dict = {"add_kernel": [triton.Config({"BLOCK_SIZE": 2048})],
                             "softmax_kernel": [triton.Config({}, num_warps=4)]}
        """))
    assert configs_of(path, course, "vector_add", tmp_path)[1] == [
        {"kwargs": {"BLOCK_SIZE": 2048}, "num_warps": 4, "num_stages": 3}]
    assert configs_of(path, course, "softmax", tmp_path)[1] == [{"kwargs": {}, "num_warps": 4, "num_stages": 3}]


def test_a_launch_configuration_is_completed_from_the_course(course):
    benchmark = course.puzzle("softmax").benchmark  # config: {BLOCK_N: next_power_of_2(N), num_warps: 8}
    sizes = {"M": 64, "N": 1000}
    assert benchmark.launch_config({}, sizes) == {"kwargs": {"BLOCK_N": 1024}, "num_warps": 8}
    assert benchmark.launch_config({"kwargs": {}, "num_warps": 2, "num_stages": 4}, sizes) == {
        "kwargs": {"BLOCK_N": 1024}, "num_warps": 2, "num_stages": 4}
    matmul = course.puzzle("matmul").benchmark
    assert matmul.launch_config({"kwargs": {"BLOCK_K": 32}}, {"M": 64, "N": 64, "K": 64}) == {
        "kwargs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, "num_warps": 8, "num_stages": 3}


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without a GPU")
def test_bench_without_a_gpu_says_so_and_exits_2(tmp_path):
    result = subprocess.run([sys.executable, "-m", "grader.cli", "bench", "solutions/", "--puzzle", "vector_add",
                             "--out", str(tmp_path / "r.json")], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "no CUDA GPU here" in result.stderr and "triton-course check" in result.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("config,message", [
    ({"kwargs": {"BLOCK": 128}}, "'BLOCK' is not a parameter of the kernel; the configurable parameters are BLOCK_SIZE"),
    ({"kwargs": {"n_elements": 128}}, "n_elements is not one of the puzzle's block sizes"),
    ({"kwargs": {"BLOCK_SIZE": 100}}, "powers of 2"),
    ({"kwargs": {"BLOCK_SIZE": 128}, "num_warps": 3}, "num_warps is one of"),
    ({"kwargs": {"BLOCK_SIZE": 128}, "num_stages": 20}, "num_stages is between 1 and 8"),
    ({"error": "the tuning configurations raise NameError"}, "raise NameError"),
    ({"kwargs": {"BLOCK_SIZE": 128}, "pre_hook": "x"}, "unknown fields"),
    ({"kwargs": {"BLOCK_SIZE": 128, "ACTIVATION": [1]}}, "take numbers, booleans or short strings"),
    ({"kwargs": {"BLOCK_SIZE": 128, "ACTIVATION": "x" * 101}}, "take numbers, booleans or short strings"),
])
def test_invalid_configurations_are_refused(course, config, message):
    puzzle = course.puzzle("vector_add")
    valid, problems = validate_configs(puzzle, [config], tuple(puzzle.args) + ("ACTIVATION",))
    assert valid == [] and message in problems[0]


def test_refusals_name_parameters_both_ways(course):
    puzzle = course.puzzle("vector_add")
    params = ("x_ptr", "y_ptr", "output_ptr", "n", "BLOCK")
    valid, problems = validate_configs(puzzle, [{"kwargs": {"n": 128}}, {"kwargs": {"BLOCK": 64}}], params)
    assert "n (the course's n_elements) is not one of the puzzle's block sizes" in problems[0]
    assert "the configurable parameters are BLOCK (the course's BLOCK_SIZE)" in problems[0]
    assert valid == [{"kwargs": {"BLOCK_SIZE": 64}, "constants": {}}]


def test_the_physical_floor():
    h100 = peaks("NVIDIA H100 80GB HBM3", {})
    assert floor_seconds(3.35e12, None, "float32", h100) == pytest.approx(1.0)
    assert floor_seconds(None, 989e12, "float16", h100) == pytest.approx(1.0)
    unknown = peaks("Some GPU", {"copy_bandwidth": 1e12, "matmul_rate": 100e12})
    assert unknown["bandwidth"] == 1.25e12


def test_summary_gives_median_and_spread():
    stats = summary([1.0, 1.1, 0.9, 1.0, 5.0])
    assert stats["median"] == 1.0 and stats["calls"] == 5 and stats["spread"] > 0


def _result(student, speedups, status="pass"):
    puzzles = [{"id": "vector_add", "title": "Vector add", "status": status, "reason": "the kernel changed its inputs",
                "timings": [{"sizes": {"N": 1}, "time_s": 1e-3 / s, "speedup": s, "bytes": 1e9, "flops": None,
                             "written_bytes": 1e9 / 3,
                             "spread": 0.01, "calls": 10, "baseline_time_s": 1e-3} for s in speedups]}]
    result = {"student": student, "device": {"name": "NVIDIA H100", "driver": "1", "cuda": "13", "torch": "2.11",
                                             "triton": "3.6", "copy_bandwidth": 3e12, "read_bandwidth": 3e12,
                                             "write_bandwidth": 3e12, "matmul_rate": 8e14},
              "puzzles": puzzles}
    for puzzle in puzzles:
        rates(puzzle, result["device"])
    return result


def test_the_roofline_of_a_memory_bound_kernel_is_its_mix_of_reads_and_writes(course):
    device = {"copy_bandwidth": 3e12, "read_bandwidth": 3e12, "write_bandwidth": 4e12, "matmul_rate": 1e15}
    outer_add = course.puzzle("outer_add")
    sizes = {"M": 16384, "N": 16384}
    written = written_bytes(outer_add, sizes)
    assert written == 16384 * 16384 * 4
    total = (16384 * 16384 + 2 * 16384) * 4
    # A kernel at the write bandwidth for its writes and the read bandwidth for its reads is at 100%, though it
    # moves its bytes faster than a copy does.
    at_roofline = (total - written) / 3e12 + written / 4e12
    timing = {"time_s": at_roofline, "bytes": total, "flops": None, "written_bytes": written}
    rates({"timings": [timing]}, device)
    assert timing["fraction"] == pytest.approx(1.0) and timing["gbps"] > 3e3
    read_only = {"time_s": 1e-3, "bytes": 3e9, "flops": None, "written_bytes": 0}
    rates({"timings": [read_only]}, device)
    assert read_only["fraction"] == pytest.approx(1.0)


def test_ranking_by_geometric_mean_of_speedups():
    results = [_result("ada", [1.0, 4.0]), _result("bob", [3.0]), _result("cy", [9.0], status="rejected")]
    assert [(s, round(m, 6) if m else m, n) for s, m, n in ranking(results)] == [
        ("bob", 3.0, 1), ("ada", 2.0, 1), ("cy", None, 0)]


def test_the_page_lists_students_figures_and_reasons(tmp_path):
    results = [_result("ada", [1.0, 4.0]), _result("cy", [9.0], status="rejected")]
    page = write_leaderboard(results, tmp_path).read_text()
    assert "ada" in page and "2.00x" in page and "the kernel changed its inputs" in page
    assert (tmp_path / "nvidia-h100-vector_add.png").exists()


def test_students_are_ranked_against_the_same_gpu_model_only(tmp_path):
    h200 = _result("dee", [50.0])
    h200["device"]["name"] = "NVIDIA H200"
    page = write_leaderboard([_result("ada", [1.0, 4.0]), _result("bob", [3.0]), h200], tmp_path).read_text()
    parts = {part.split('"', 1)[0]: part for part in page.split('<div class="gpu" id="')[1:]}
    assert set(parts) == {"nvidia-h100", "nvidia-h200"}
    assert "bob" in parts["nvidia-h100"] and "ada" in parts["nvidia-h100"] and "dee" not in parts["nvidia-h100"]
    assert "dee" in parts["nvidia-h200"] and "bob" not in parts["nvidia-h200"]
    assert "measured on NVIDIA H200" in parts["nvidia-h200"]
    assert '<td data-value="1">1</td><td>bob</td>' in parts["nvidia-h100"], "bob is first on the H100"
    assert (tmp_path / "nvidia-h100-vector_add.png").exists() and (tmp_path / "nvidia-h200-vector_add.png").exists()


@needs_gpu
def test_the_reference_solutions_pass_on_the_gpu(course, tmp_path):
    benchmarked = [puzzle.id for puzzle in course.puzzles if puzzle.benchmark is not None]
    results = bench_submission(course, ROOT / "solutions", benchmarked)
    assert [puzzle["id"] for puzzle in results["puzzles"]] == benchmarked
    for puzzle in results["puzzles"]:
        assert puzzle["status"] == "pass", puzzle
        assert all(0.2 < t["fraction"] < 1.05 and t["speedup"] > 0.5 for t in puzzle["timings"]), puzzle


@needs_gpu
def test_declared_gpu_configs_are_the_ones_timed(course, tmp_path):
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    path = tmp_path / "vector_add.py"
    path.write_text(solution[:solution.index("@triton.autotune")] + solution[solution.index("@triton.jit"):]
                    + '\nGPU_CONFIGS = [triton.Config({"BLOCK_SIZE": 512}, num_warps=2)]\n')
    (puzzle,) = bench_submission(course, path, ["vector_add"])["puzzles"]
    assert puzzle["status"] == "pass", puzzle
    assert puzzle["timings"][0]["config"] == {"kwargs": {"BLOCK_SIZE": 512}, "num_warps": 2, "num_stages": 3}


@needs_gpu
def test_kernels_whose_pruner_guards_a_configuration_pass_on_the_gpu(course):
    """Each launch with what the kernel's early_config_prune keeps for it: a configuration unmasked off whole
    blocks, or wrong on long vectors, is never launched where it would be wrong."""
    alternatives = ROOT / "tests" / "alternatives" / "vector_add"
    for name in ("pruned_unmasked_config", "pruned_unmasked_at_its_own_block", "pruned_large_block_fast_path",
                 "pruned_short_offsets_off_long_vectors"):
        (puzzle,) = bench_submission(course, alternatives / f"{name}.py", ["vector_add"])["puzzles"]
        assert puzzle["status"] == "pass", (name, puzzle)
        if name == "pruned_short_offsets_off_long_vectors":
            assert puzzle["timings"][0]["config"]["kwargs"] == {"BLOCK_SIZE": 1024}, puzzle


@needs_gpu
def test_a_wrong_configuration_the_pruner_keeps_for_one_launch_fails_on_the_gpu(course):
    """Each case runs again with each configuration's constants where the pruner keeps it, as on the CPU: a split
    case whose second launch may get the wrong fast configuration fails verification on the GPU too."""
    path = BUGS / "strided_views" / "fast_config_pruned_in_for_one_launch.py"
    (puzzle,) = bench_submission(course, path, ["strided_views"], timed=False)["puzzles"]
    assert puzzle["status"] == "fail" and "FAST=True" in puzzle["reason"], puzzle


@needs_gpu
def test_a_kernel_too_large_for_the_gpu_fails_with_the_gpus_reason(course, tmp_path):
    """Tiles that need more shared memory than the GPU has compile, and fail when the binary is loaded: the
    verdict says so, as a failed case, never a crash of the timing process."""
    solution = (ROOT / "solutions" / "matmul.py").read_text()
    start, end = solution.index("@triton.autotune"), solution.index("@triton.jit")
    path = tmp_path / "matmul.py"
    path.write_text(solution[:start] + '@triton.autotune(configs=[triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, '
                    '"BLOCK_K": 256}, num_warps=8, num_stages=4)], key=["M", "N", "K"])\n' + solution[end:])
    (puzzle,) = bench_submission(course, path, ["matmul"])["puzzles"]
    assert puzzle["status"] == "fail", puzzle
    assert "out of resource" in puzzle["reason"].lower() or "the GPU compiler rejects" in puzzle["reason"], puzzle
    assert "crash" not in puzzle["reason"] and "Traceback" not in puzzle["reason"]


@needs_gpu
@pytest.mark.parametrize("configs", ["LITERAL", "COMPUTED"])
def test_a_kernel_wrong_only_at_its_configurations_blocks_fails_on_the_gpu_before_it_is_timed(course, tmp_path,
                                                                                                configs):
    """Right at every case's blocks, a shortcut at the tiles it is timed at: verified at those tiles on the GPU
    too, whether the load stage reads the configurations (written out) or only the compile sandbox (computed)."""
    shortcut = (BUGS / "matmul" / "shortcut_at_large_tiles.py").read_text()
    path = tmp_path / "matmul.py"
    path.write_text(shortcut.replace("@triton.autotune(configs=[", "LITERAL = [").replace(
        'num_stages=4)],\n                 key=["M", "N", "K"])\n',
        "num_stages=4)]\nCOMPUTED = LITERAL if len(LITERAL) else []\n\n\n"
        f'@triton.autotune(configs={configs}, key=["M", "N", "K"])\n'))
    (puzzle,) = bench_submission(course, path, ["matmul"])["puzzles"]
    assert puzzle["status"] == "fail" and "(blocks BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)" in puzzle["reason"], puzzle


CHEATS = {
    "calls PyTorch instead of a kernel": ("vector_add", '''
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE):
            out_ptr.copy_(x_ptr + y_ptr)
        ''', "error", "plain Python function"),
    "zeroes its inputs": ("vector_add", '''
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_elements
            x = tl.load(x_ptr + offsets, mask=mask)
            y = tl.load(y_ptr + offsets, mask=mask)
            tl.store(out_ptr + offsets, x + y, mask=mask)
            tl.store(x_ptr + offsets, x * 0, mask=mask)
        ''', "fail", "is an input but the kernel changed it"),
    "computes in a narrower type": ("softmax", '''
        import triton
        import triton.language as tl

        @triton.jit
        def softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < N, other=float("-inf")).to(tl.float16)
            numerator = tl.exp((x - tl.max(x, axis=0)).to(tl.float32)).to(tl.float16)
            tl.store(out_ptr + row * stride_om + cols, numerator / tl.sum(numerator, axis=0), mask=cols < N)
        ''', None, None),
    "caches outputs, uses another stream and patches the timer": ("vector_add", textwrap.dedent('''
        import torch
        CACHE = {}
        STREAM = torch.cuda.Stream()
        torch.cuda.Event.elapsed_time = lambda self, end: 1e-6
        ''') + (ROOT / "solutions" / "vector_add.py").read_text(), "pass", None),
}


@needs_gpu
@pytest.mark.parametrize("name", list(CHEATS))
def test_leaderboard_tricks_are_rejected_or_have_no_effect(course, tmp_path, name):
    puzzle_id, source, status, evidence = CHEATS[name]
    path = tmp_path / f"{puzzle_id}.py"
    path.write_text(textwrap.dedent(source))
    result = bench_submission(course, path, [puzzle_id])["puzzles"][0]
    if status is None:  # a narrower type: wrong at the edge cases or on a rechecked output
        assert result["status"] in ("fail", "rejected"), result
    else:
        assert result["status"] == status, result
    if evidence:
        assert evidence in json.dumps(result)
    if result["status"] == "pass":  # the host-side tricks never ran: honest times, above the floor
        assert all(t["time_s"] > 1e-5 and math.isfinite(t["speedup"]) for t in result["timings"])


@needs_gpu
def test_code_that_runs_at_compile_time_cannot_touch_the_timing(course, tmp_path, monkeypatch):
    """A module that patches the CUDA events and the physical floor, handed to the GPU stage without the load
    stage (which would refuse it): it runs in the compile sandbox (its marker proves it), and the times and
    the floor come from the timing process, which never ran it."""
    import grader.gpu.bench as bench
    from grader.pipeline.load import MAIN, KernelSource, Loaded

    marker = tmp_path / "marker"
    payload = textwrap.dedent(f"""
        real = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "catch_warnings"][0]()
        real = real._module.__builtins__
        torch = real["__import__"]("torch")
        torch.cuda.Event.elapsed_time = lambda self, end: 1e-6
        timing = real["__import__"]("grader.gpu.timing", fromlist=["floor_seconds"])
        timing.floor_seconds = lambda *args, **kwargs: 0.0
        try:
            real["open"]({str(marker)!r}, "w").write("the payload ran")
        except real["OSError"]:
            pass  # bubblewrap: the test's folder is not in the sandbox
    """)
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    kernel = solution[solution.index("@triton.jit"):]
    source = KernelSource("add_kernel", {MAIN: "import triton\nimport triton.language as tl\n" + payload + kernel},
                          {MAIN: []}, ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE"))
    monkeypatch.setattr(bench, "load_read", lambda *args, **kwargs: {"vector_add": Loaded("found", source, "x.py")})
    (result,) = bench.bench_read(course, None, ["vector_add"], student="x")["puzzles"]
    if sandbox_kind() != "bubblewrap":
        assert marker.exists(), "the payload ran, in the compile sandbox"
    assert result["status"] == "pass", result
    timing = result["timings"][0]
    floor = 3 * 33554432 * 4 / peaks(torch.cuda.get_device_name(0), {"copy_bandwidth": 1e12, "matmul_rate": 1e15})["bandwidth"]
    assert timing["time_s"] > floor and timing["time_s"] > 1e-5, timing


def _gpu_class(directory):
    """ada: the reference kernel; bob: a kernel that is wrong on the GPU too; cy: nothing to bench."""
    directory.mkdir()
    (directory / "ada.py").write_text((ROOT / "solutions" / "vector_add.py").read_text())
    (directory / "bob.py").write_text((ROOT / "tests" / "bugs" / "vector_add" / "block_offset_by_one.py").read_text())
    (directory / "cy").mkdir()
    return directory


def _check_class_results(out):
    from grader.gpu.leaderboard import load_results
    results = {r["student"]: r for r in load_results([out])}
    assert list(results) == ["ada", "bob", "cy"]
    assert results["ada"]["puzzles"][0]["status"] == "pass", results["ada"]
    assert results["ada"]["device"]["name"] == torch.cuda.get_device_name(0)
    assert 0.2 < results["ada"]["puzzles"][0]["timings"][0]["fraction"] < 1.05
    assert results["bob"]["puzzles"][0]["status"] == "fail", results["bob"]
    assert results["cy"]["puzzles"][0]["status"] == "error" and "no .py or .ipynb" in results["cy"]["puzzles"][0]["reason"]
    return results


@needs_gpu
def test_a_class_is_benched_on_this_gpu_one_student_after_another(tmp_path):
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "grader.cli", "bench", str(_gpu_class(tmp_path / "class")), "--class",
                           "--puzzle", "vector_add", "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    _check_class_results(out)


@needs_gpu
def test_a_class_is_benched_on_a_dask_cluster_of_one_gpu_worker(tmp_path):
    from conftest import dask_cluster
    out = tmp_path / "results.json"
    with dask_cluster(tmp_path, 1, ["--resources", "GPU=1"], {"CUDA_VISIBLE_DEVICES": "0"}) as (address, _):
        done = subprocess.run([sys.executable, "-m", "grader.cli", "bench", str(_gpu_class(tmp_path / "class")),
                               "--class", "--scheduler", address, "--puzzle", "vector_add", "--out", str(out)],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = _check_class_results(out)
    page = write_leaderboard(list(results.values()), tmp_path / "board").read_text()
    assert "ada" in page and "measured on " + torch.cuda.get_device_name(0) in page


def test_bench_class_with_an_unreachable_scheduler_is_a_usage_error_that_says_how_to_start_gpu_workers(tmp_path):
    done = subprocess.run([sys.executable, "-m", "grader.cli", "bench", str(_gpu_class(tmp_path / "class")), "--class",
                           "--scheduler", "tcp://127.0.0.1:9", "--puzzle", "vector_add", "--out",
                           str(tmp_path / "results.json")], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"})
    assert done.returncode == 2, done.stderr[-3000:]
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in done.stderr and "--resources GPU=1" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "results.json").exists()


def test_bench_class_checks_what_a_gpu_worker_returns(course):
    from grader.gpu.class_bench import checked
    forged = {"student": "ada", "device": None, "puzzles": [{"id": "vector_add", "title": "x", "status": "pass",
                                                               "timings": [{"time_s": -1, "speedup": 1e9, "fraction": 9}]}]}
    result = checked(course, "mallory", ["vector_add"], forged)
    assert result["student"] == "mallory" and result["puzzles"][0]["status"] == "error"
    assert "malformed results" in result["puzzles"][0]["reason"]
    assert checked(course, "bob", ["vector_add"], "not a dict")["puzzles"][0]["status"] == "error"
    good = {"student": "someone else", "device": None, "puzzles": [{"id": "vector_add", "title": "x", "status": "fail"}]}
    assert checked(course, "bob", ["vector_add"], good)["student"] == "bob", "a result is filed under its task's student"
