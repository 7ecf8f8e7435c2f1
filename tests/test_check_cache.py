"""A student's repeated check of an unchanged kernel skips its compiles and its profile; nothing else changes."""
import json
import os
import subprocess
import sys

import torch

from grader.pipeline.check_cache import CheckCache
from grader.pipeline.grade import grade_submission

from conftest import BUGS, ROOT


def request(modules=None, args=(torch.zeros(4), torch.zeros(4), 4, 1024), targets=(80, 90), profile=None):
    job = {"kernel": "add_kernel", "modules": modules or {"__main__": "import triton\n"}, "targets": list(targets),
           "cases": [{"launches": [{"args": list(args)}]}]}
    if profile is not None:
        job["profile"] = profile
    return job


def test_the_key_is_what_the_compiler_reads_and_nothing_else(tmp_path):
    cache = CheckCache(tmp_path)
    key = cache.key(request())
    assert cache.key(request(args=(torch.ones(4), torch.randn(4), 4, 1024))) == key, "the values of a tensor"
    assert cache.key(request(args=(torch.zeros(9), torch.zeros(4), 4, 1024))) == key, "the shape of a tensor"
    different = [request(modules={"__main__": "import triton  # edited\n"}),
                 request(args=(torch.zeros(4, dtype=torch.float16), torch.zeros(4), 4, 1024)),
                 request(args=(torch.zeros(4), torch.zeros(4), 1, 1024)),  # an int equal to 1 is folded in
                 request(args=(torch.zeros(4), torch.zeros(4), 4, 512)),
                 request(targets=(90,)),
                 request(profile={"puzzle": "vector_add", "configs": None, "config": None, "seconds": 10})]
    assert len({cache.key(r) for r in different} | {key}) == len(different) + 1
    profiled = request(profile={"puzzle": "vector_add", "configs": None, "config": None, "seconds": 10})
    assert cache.key(profiled, "course: a") != cache.key(profiled, "course: b"), "a benchmark is the course's"
    assert cache.key({**profiled, "profile": {**profiled["profile"], "seconds": 99}}) == cache.key(profiled)


def test_an_tensoris_read_back_only_as_the_cache_wrote_it(tmp_path):
    cache = CheckCache(tmp_path)
    resources = {"registers": 40, "spills": 0, "shared": 0, "num_warps": 4, "pipelined": None}
    cache.put("a", resources, None)
    cache.put("b", None, {"configs": [], "error": "the profile's time ran out"})
    assert cache.get("a") == {"resources": resources, "profile": None}
    assert cache.get("b") == {"resources": None, "profile": None}, "a failed profile is not kept"
    assert cache.get("c") is None
    for name, entry in {"d": "not json", "e": {"resources": None, "profile": None, "more": 1},
                        "f": {"resources": {**resources, "registers": 10 ** 9}, "profile": None},
                        "g": ["resources", "profile"], "h": "x" * (2 << 20),
                        "i": {"resources": None, "profile": {"configs": [], "programs": "all of them"}}}.items():
        (tmp_path / f"{name}.json").write_text(entry if isinstance(entry, str) else json.dumps(entry))
        assert cache.get(name) is None, name
    (tmp_path / "j.json").symlink_to(tmp_path / "a.json")
    assert cache.get("j") is None, "a link is not followed"


def test_a_second_check_skips_the_compile_and_the_profile_and_gives_the_same_report(course, tmp_path):
    cache = CheckCache(tmp_path)
    solution = ROOT / "solutions" / "vector_add.py"
    first = grade_submission(course, solution, ["vector_add"], performance=True, check_cache=cache)
    [entry] = tmp_path.glob("*.json")
    kept = json.loads(entry.read_text())
    assert kept["resources"]["num_warps"] >= 1, "the benchmark's compile is kept for the estimate"
    assert kept["profile"]["sites"], "and the profile"
    second = grade_submission(course, solution, ["vector_add"], performance=True, check_cache=cache)
    assert second.to_dict() == first.to_dict()
    assert first.puzzle("vector_add").performance["predicted_s"] > 0
    assert list(tmp_path.glob("*.json")) == [entry]


def test_a_check_is_recalled_while_other_puzzles_entries_change_and_not_after_its_own_benchmark_does(course,
                                                                                                    tmp_path):
    import yaml

    from grader.course import load_course

    def edited(change):
        """The course with `change` made to its entries, as a file of its own."""
        data = yaml.safe_load(course.path.read_text())
        change({entry["id"]: entry for entry in data["puzzles"]})
        path = tmp_path / f"course{len(list(tmp_path.glob('course*.yml')))}.yml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return load_course(path, text=path.read_text())

    def other_puzzles(entries):
        entries["matmul"]["benchmark"]["sizes"] = [{"M": 1024, "N": 1024, "K": 1024}]
        entries["outer_add"]["title"] = "Outer sum"

    def its_own_benchmark(entries):
        entries["vector_add"]["benchmark"]["sizes"] = [{"N": 1 << 20}]

    folder = tmp_path / "cache"
    cache = CheckCache(folder)
    solution = ROOT / "solutions" / "vector_add.py"
    first = grade_submission(course, solution, ["vector_add"], performance=True, check_cache=cache)
    again = grade_submission(edited(other_puzzles), solution, ["vector_add"], performance=True, check_cache=cache)
    assert len(list(folder.glob("*.json"))) == 1, "the other puzzles' entries are not read by vector add's check"
    assert again.puzzle("vector_add").status == "pass"
    assert again.puzzle("vector_add").performance == first.puzzle("vector_add").performance
    resized = grade_submission(edited(its_own_benchmark), solution, ["vector_add"], performance=True,
                               check_cache=cache)
    assert len(list(folder.glob("*.json"))) == 2, "its own benchmark is profiled again"
    assert resized.puzzle("vector_add").performance["sizes"] == {"N": 1 << 20}


def test_a_kept_profile_is_the_estimate_of_the_next_check(course, tmp_path):
    """The worker is asked for no profile when one is kept: what the estimate says comes from the entry."""
    cache = CheckCache(tmp_path)
    solution = ROOT / "solutions" / "vector_add.py"
    first = grade_submission(course, solution, ["vector_add"], performance=True, check_cache=cache)
    [entry] = tmp_path.glob("*.json")
    kept = json.loads(entry.read_text())
    for tensor in kept["profile"]["unique"]:  # other counts than the kernel's own: another estimate
        tensor["bytes"] //= 10
    entry.write_text(json.dumps(kept))
    second = grade_submission(course, solution, ["vector_add"], performance=True, check_cache=cache)
    assert second.puzzle("vector_add").performance["predicted_s"] != first.puzzle("vector_add").performance[
        "predicted_s"]
    kept["profile"] = None  # as after a profile that failed: the next check profiles again, and keeps it
    entry.write_text(json.dumps(kept))
    third = grade_submission(course, solution, ["vector_add"], performance=True, check_cache=cache)
    assert third.to_dict() == first.to_dict() and json.loads(entry.read_text())["profile"] is not None


class RecordingCache(CheckCache):
    def key(self, *args):
        self.last = super().key(*args)
        return self.last


def test_the_worker_trusts_the_cache_so_only_acceptances_are_kept(course, tmp_path):
    """What ptxas refuses is never kept; an entry that says otherwise (a student's own machine, their own cache)
    is what skips the compile."""
    cache = RecordingCache(tmp_path)
    refused = BUGS / "vector_add" / "clashing_cache_hints.py"
    result = grade_submission(course, refused, ["vector_add"], check_cache=cache).puzzle("vector_add")
    assert [d.kind for d in result.diagnostics] == ["compile"]
    assert not list(tmp_path.glob("*.json")), "a rejection is not kept"
    cache.put(cache.last, None, None)
    skipped = grade_submission(course, refused, ["vector_add"], check_cache=cache).puzzle("vector_add")
    assert skipped.status == "pass", "the cases pass in the interpreter, the compile was skipped"


def test_a_check_with_hidden_cases_keeps_nothing(course, tmp_path):
    cache = CheckCache(tmp_path)
    grade_submission(course, ROOT / "solutions" / "vector_add.py", ["vector_add"], hidden_seed=3, check_cache=cache)
    assert not list(tmp_path.iterdir())


def test_check_keeps_what_it_learned_and_fresh_ignores_it(tmp_path):
    env = {**os.environ, "TRITON_COURSE_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "grader.cli", "check", str(ROOT / "solutions"), "--puzzle", "vector_add",
               "--puzzle", "outer_add", "--no-performance"]
    first = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    assert first.returncode == 0, first.stdout + first.stderr
    entries = sorted((tmp_path / "cache").glob("*.json"))
    assert len(entries) == 2
    for entry in entries:
        entry.write_text("{}")  # not an entry: ignored, and replaced by the next compile
    again = subprocess.run(command + ["--fresh"], env=env, cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == first.stdout
    assert all(entry.read_text() == "{}" for entry in entries), "--fresh neither reads nor writes"
    third = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    assert third.stdout == first.stdout and all(entry.read_text() != "{}" for entry in entries)
