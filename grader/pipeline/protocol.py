"""What the grader sends the sandboxed worker, and how what comes back is checked before the grader uses it.

The worker runs the submission's kernels, so whatever it returns is data from an untrusted process: a result
file is read only if it is a regular file under the size limit, loaded with torch's restricted unpickler,
and checked field by field against the job it answers (the tensors' shapes and dtypes, every program code
decodable, every string capped). Anything else makes the puzzle's verdict a crash, never an exception in the
grader.
"""
import io

import torch

from ..course import configuration_case_base
from .cases import other_garbage
from .configs import MOST_CONFIGURATIONS
from .load.files import UnreadableFile, read_regular_file
from .performance import GPUS
from .results import printable

ERROR_KINDS = ("out_of_bounds", "kernel_error", "out_of_memory")
ACCESSES = ("load", "store", "atomic")
MESSAGE_CHARS = 4000
OFFSETS_KEPT = 4096


class MalformedResult(Exception):
    """The worker's result does not answer its job: the worker was broken or tampered with."""


def job(key, puzzle, source, cases, settings, profile=False, spare_cores=False, order=None):
    """The request for one puzzle: the rebuilt modules, and each case's tensors and launches; with `profile` (True,
    or {puzzle id: the configuration to profile}), the performance stage's run at the benchmark size too.
    `spare_cores`: the machine has cores no other worker uses, for the worker's compiles. `order`: the order every
    case runs its programs in, instead of each case's own."""
    request = {"id": key, **kernel_request(source), "puzzle_params": list(puzzle.params),
               "targets": list(settings.compile_targets), "spare_cores": bool(spare_cores),
               "cases": [case_payload(puzzle, case, order) for case in cases]}
    if profile and puzzle.benchmark is not None:
        request["profile"] = {"puzzle": puzzle.id, "configs": source.configs, "configs_module": source.configs_module,
                              "config": profile.get(puzzle.id) if isinstance(profile, dict) else None,
                              "seconds": settings.profile_timeout_s,
                              "target": GPUS[settings.estimate_gpu].compute_capability}
    return request


def configs_job(key, puzzle, source, settings):
    """The request for the tuning configurations a kernel computes (KernelSource.configs_computed), evaluated by the
    worker in the kernel's module as the GPU stage's compile sandbox evaluates them: no case, no compile."""
    return {"id": key, **kernel_request(source), "puzzle_params": list(puzzle.params),
            "targets": list(settings.compile_targets), "spare_cores": False, "cases": [],
            "evaluate_configs": {"expression": source.configs, "module": source.configs_module,
                                 "kernels": [source.kernel, puzzle.kernel]}}


def kernel_request(source):
    """What a sandbox that runs the submission's modules (this stage's worker, the GPU stage's compile sandbox)
    needs to know of its kernel: the rebuilt modules, the tuning constants every case runs with, and the host code
    run at each launch."""
    return {"kernel": source.kernel, "modules": dict(source.modules), "tuned": dict(source.tuned),
            "variants": [dict(variant) for variant in source.variants],
            "prune": pruning_request(source),  # which configurations each case may run with
            "host_code_at_launch": source.host_code_at_launch,
            "unseen_by_heuristics": list(source.unseen_by_heuristics)}


def pruning_request(source):
    """What a sandbox needs to run the kernel's early_config_prune (configs.kernel_pruner), or None where it has
    none the grader runs."""
    if source.prune is None or source.configs is None:
        return None
    return {"configs": source.configs, "configs_module": source.configs_module, "by": source.prune}


def case_payload(puzzle, case, order=None):
    buffers = {name: {"parent": b.parent, "views": b.views} for name, b in case.buffers.items()}
    launches = []
    for launch_index, plan in enumerate(case.launches):
        regions = {}  # parameter position -> (tensor name, which of its views)
        for position, value in enumerate(plan.args):
            if isinstance(value, torch.Tensor):
                name = next(n for n, view in plan.views.items() if view is value)
                regions[position] = (name, launch_index if len(case.buffers[name].views) > 1 else 0)
        launches.append({"args": plan.args, "grid": list(plan.grid), "dims": plan.dims, "regions": regions,
                         "sequential": case.program_order(plan, "sequential"),
                         "shuffled": case.program_order(plan, "shuffled")})
    return {"buffers": buffers, "launches": launches, "order": order or case.spec.order,
            "refill": {name: other_garbage(b, case.seed) for name, b in case.buffers.items()
                       if b.spec.role == "output"},
            "written": [name for name, b in case.buffers.items() if b.spec.written],
            "configuration": configuration_case_base(case.spec.name) is not None}


def read_result(path, settings):
    """A worker's result file, loaded without following links, blocking or unbounded reads."""
    try:
        data = read_regular_file(path, settings.result_file_bytes)
    except UnreadableFile as error:
        raise MalformedResult(f"its result file {error}") from None
    try:
        return torch.load(io.BytesIO(data), weights_only=True)
    except Exception as error:  # the restricted unpickler refuses anything but plain data and tensors
        raise MalformedResult(f"its result file is not readable data ({type(error).__name__})") from None


def check_outcome(outcome, request, cases, settings):
    """The worker's outcome for `request` (a job), checked against the cases it was given; raises
    MalformedResult when anything is missing, mistyped, out of range or of the wrong shape."""
    _expect(isinstance(outcome, dict), "the outcome is not a mapping")
    compile_problems = outcome.get("compile")
    _expect(isinstance(compile_problems, list), "no list of compile problems")
    checked = {"compile": [_compile_problem(p, request, settings) for p in compile_problems[:10]], "cases": []}
    if outcome.get("module_raised") is not None:
        checked["module_raised"] = module_raised(outcome["module_raised"], request["modules"])
        return checked
    if checked["compile"]:
        return checked
    if "evaluate_configs" in request:  # plain data, which configs.validate_configs checks against the puzzle
        configs = outcome.get("configs")
        _expect(isinstance(configs, list) and len(configs) <= MOST_CONFIGURATIONS,
                "the tuning configurations are not a list")
        checked["configs"] = configs
        return checked
    checked["cases"] = check_runs(outcome.get("cases"), cases, [payload["order"] for payload in request["cases"]],
                                  settings, request["modules"],
                                  [request.get("tuned", {}), *request.get("variants", ())],
                                  [payload.get("configuration", False) if request.get("prune") is not None else None
                                   for payload in request["cases"]])
    if outcome.get("resources") is not None:
        checked["resources"] = check_resources(outcome["resources"])
    if "profile" in request and outcome.get("profile") is not None:
        checked["profile"] = check_profile(outcome["profile"], request["modules"])
    return checked


def check_profile(profile, modules=None):
    """The performance stage's counters (traffic.py), checked field by field; `modules`: the names of the job's
    modules, one of which (or None) each line is of (any short name where they are not known: a kept profile)."""
    _expect(isinstance(profile, dict), "the profile is not a mapping")
    configs = profile.get("configs")
    _expect(isinstance(configs, list) and len(configs) <= MOST_CONFIGURATIONS,
            "the profile's configurations are not a list")
    if "error" in profile:
        return {"configs": configs, "error": _text(profile["error"], 500)}
    programs = profile.get("programs")
    _expect(isinstance(programs, list) and 1 <= len(programs) <= 3 and
            all(isinstance(p, list) and len(p) == 3 for p in programs), "the profile's programs are malformed")
    kept = profile.get("kept")  # which of the configurations the kernel's pruner keeps at the benchmark's size
    _expect(kept is None or isinstance(kept, list) and 1 <= len(kept) <= len(configs) and
            all(type(i) is int and 0 <= i < len(configs) for i in kept), "the configurations kept are malformed")
    checked = {"configs": configs, "programs": [[_int(i, 0, 2 ** 31) for i in p] for p in programs],
               "resources": check_resources(profile.get("resources")), "special": _count(profile.get("special", 0)),
               "arithmetic": _count(profile.get("arithmetic", 0)), "rounds": _count(profile.get("rounds")),
               "sites": [], "dots": [], "unique": [], "reductions": []}
    if kept is not None:
        checked["kept"] = list(kept)
    for key, fields, limit in (("sites", SITE_COUNTS, 256), ("dots", ("m", "n", "k", "executions"), 64),
                               ("unique", ("bytes",), 64)):
        entries = profile.get(key)
        _expect(isinstance(entries, list) and len(entries) <= limit, f"the profile's {key} are malformed")
        for entry in entries:
            _expect(isinstance(entry, dict), f"one of the profile's {key} is not a mapping")
            item = {name: _count(entry.get(name)) for name in fields}
            if key != "unique":
                _expect(entry.get("line") is None or type(entry.get("line")) is int, "a line is not a number")
                item["line"], item["module"] = entry.get("line"), _module(entry.get("module"), modules)
            if key != "dots":
                _expect(entry.get("access") in ACCESSES, "an access of an unknown kind")
                item["access"] = entry["access"]
                item["tensor"] = _text(entry.get("tensor"), 64)
            else:
                for name in ("a", "b", "precision"):
                    item[name] = _text(entry.get(name), 64)
            checked[key].append(item)
    rereads = profile.get("rereads")
    _expect(isinstance(rereads, list) and len(rereads) <= 256, "the profile's re-reads are malformed")
    checked["rereads"] = []
    for entry in rereads:
        _expect(isinstance(entry, dict), "one of the profile's re-reads is not a mapping")
        checked["rereads"].append({"tensor": _text(entry.get("tensor"), 64),
                                   "distance": _count(entry.get("distance"), 1), "bytes": _count(entry.get("bytes"))})
    reductions = profile.get("reductions")
    _expect(isinstance(reductions, list) and len(reductions) <= 64, "the profile's reductions are malformed")
    for entry in reductions:
        _expect(isinstance(entry, dict), "one of the profile's reductions is not a mapping")
        shape = entry.get("shape")
        _expect(isinstance(shape, list) and 1 <= len(shape) <= 4, "a reduction's shape is malformed")
        shape = [_int(size, 1, 2 ** 31) for size in shape]
        axis = entry.get("axis")
        _expect(axis is None or (type(axis) is int and 0 <= axis < len(shape)), "a reduction's axis is malformed")
        line = entry.get("line")
        _expect(line is None or type(line) is int, "a line is not a number")
        checked["reductions"].append({"line": line, "module": _module(entry.get("module"), modules),
                                      "shape": shape, "axis": axis,
                                      "executions": _count(entry.get("executions"))})
    return checked


def _module(name, modules):
    _expect(name is None or isinstance(name, str) and len(name) <= 200 and (modules is None or name in modules),
            "a line of an unknown module")
    return name


SITE_COUNTS = ("executions", "lanes", "bytes", "sectors", "ideal_sectors", "requests")


def check_resources(resources):
    """What a compile asks of an SM (compile_check.compile_resources), checked field by field."""
    _expect(isinstance(resources, dict), "the compile's resources are not a mapping")
    if "error" in resources:
        return {"error": _text(resources["error"], 500)}
    registers = resources.get("registers")
    return {"registers": None if registers is None else _int(registers, 0, 256),
            "spills": _count(resources.get("spills", 0)), "shared": _int(resources.get("shared", 0), 0, 2 ** 24),
            "num_warps": _int(resources.get("num_warps"), 1, 33), "pipelined": _flag(resources.get("pipelined"))}


def _flag(value):
    _expect(value is None or isinstance(value, bool), "a flag is not true, false or absent")
    return value


def check_runs(returned, cases, orders, settings, modules=(), configurations=({},), pruning=None):
    """[checked run per case] of a worker's `returned` runs, one per case, each in that case's program order
    (`orders`); `modules`: the names an error may point into; `configurations`: the kernel's own constants as
    its first tuning configuration gives them, then as each other does (a run that ended without an error brings
    one run again for each other, or None where the kernel's pruner kept it off the case); `pruning`: for each
    case, None where the kernel has no pruner, else whether the case is a configuration case (which alone the
    pruner may leave unrun)."""
    _expect(isinstance(returned, list) and len(returned) == len(cases), "not one run per case")
    pruning = pruning or [None] * len(cases)
    return [_run(run, order, case, modules, settings, configurations, pruned)
            for case, order, run, pruned in zip(cases, orders, returned, pruning)]


def _expect(condition, reason):
    if not condition:
        raise MalformedResult(reason)


def _text(value, limit=MESSAGE_CHARS):
    _expect(isinstance(value, str), "a message is not text")
    return printable(value[:limit], keep="\n\t")


# The most any count the worker sends may be (bytes, executions, elements): what a float holds exactly, far beyond
# what a kernel at a benchmark's size does, so that no arithmetic on it overflows.
COUNT_LIMIT = 2 ** 53


def _count(value, low=0):
    return _int(value, low, COUNT_LIMIT)


def _int(value, low=None, high=None):
    _expect(isinstance(value, int) and not isinstance(value, bool), "a number is not an integer")
    _expect((low is None or value >= low) and (high is None or value < high), "a number is out of range")
    return value


def module_raised(raised, modules):
    """What a sandbox says stopped the submission's `modules` when it ran them (worker.module_stopped), checked."""
    _expect(isinstance(raised, dict), "what the module raised is not a mapping")
    line, module = raised.get("line"), raised.get("module")
    _expect(line is None or isinstance(line, int) and not isinstance(line, bool), "a line is not a number")
    _expect(module in modules, "the module that raised is unknown")
    return {"message": _text(raised.get("message")), "line": line, "module": module}


def _compile_problem(problem, request, settings):
    _expect(isinstance(problem, dict), "a compile problem is not a mapping")
    targets = problem.get("targets")
    _expect(isinstance(targets, list) and targets and all(t in request["targets"] for t in targets),
            "a compile problem names unknown targets")
    line, module = problem.get("line"), problem.get("module")
    _expect(line is None or isinstance(line, int) and not isinstance(line, bool), "a line is not a number")
    _expect(module is None or module in request["modules"], "a compile problem names an unknown module")
    case = problem.get("case")
    _expect(case is None or isinstance(case, int) and not isinstance(case, bool) and 0 <= case < len(request["cases"]),
            "a compile problem names an unknown case")
    return {"targets": list(targets), "message": _text(problem.get("message")), "line": line, "module": module,
            "case": case}


def _run(run, order, case, modules, settings, configurations=({},), pruning=None):
    _expect(isinstance(run, dict) and run.get("order") == order, "a run is not for its program order")
    names = set(case.buffers)
    for key in ("parents", "writers", "readers", "race", "read_unwritten", "loads", "repeated"):
        _expect(isinstance(run.get(key), dict), f"no {key}")
    _expect(set(run["parents"]) == names and set(run["writers"]) == names and set(run["readers"]) == names and
            set(run["loads"]) == names and set(run["repeated"]) == names and set(run["race"]) <= names and
            set(run["read_unwritten"]) <= names,
            "the tensors returned are not the case's")
    checked = {"order": order, "printed": _text(run.get("printed", ""), settings.kernel_output_chars),
               "parents": {}, "writers": {}, "readers": {}, "race": {}, "read_unwritten": {}, "loads": {},
               "repeated": {}}
    for name, buffer in case.buffers.items():
        parent = run["parents"][name]
        _expect(isinstance(parent, torch.Tensor) and parent.shape == buffer.parent.shape and
                parent.dtype == buffer.parent.dtype and parent.device.type == "cpu",
                f"{name} came back with the wrong shape, dtype or device")
        checked["parents"][name] = parent
        for key in ("writers", "readers"):
            codes = run[key][name]
            _expect(isinstance(codes, torch.Tensor) and codes.dtype == torch.int64 and
                    codes.shape == (buffer.parent.numel(),), f"the {key} of {name} are malformed")
            _expect(_decodable(codes, case), f"the {key} of {name} name programs that do not exist")
            checked[key][name] = codes
        checked["loads"][name] = _count(run["loads"][name])
        checked["repeated"][name] = _count(run["repeated"][name])
        if name in run["race"]:
            race = run["race"][name]
            _expect(isinstance(race, (list, tuple)) and len(race) == 3, "a race record is malformed")
            position, first, second = (_int(v, -2 ** 63, 2 ** 63) for v in race)
            _int(position, 0, buffer.parent.numel())
            _expect(_decodable(torch.tensor([first, second]), case), "a race names programs that do not exist")
            checked["race"][name] = (position, first, second)
        if name in run["read_unwritten"]:
            read = run["read_unwritten"][name]
            _expect(isinstance(read, (list, tuple)) and len(read) == 2, "a read before a write is malformed")
            position, reader = (_int(v, -2 ** 63, 2 ** 63) for v in read)
            _int(position, 0, buffer.parent.numel())
            _expect(_decodable(torch.tensor([reader]), case), "a read before a write names a program that does not "
                    "exist")
            checked["read_unwritten"][name] = (position, reader)
    crossed = run.get("crossed", {})
    _expect(isinstance(crossed, dict) and set(crossed) <= names, "a crossing names other tensors")
    checked["crossed"] = {}
    for name, record in crossed.items():
        _expect(isinstance(record, (list, tuple)) and len(record) == 3, "a crossing record is malformed")
        position, first, second = (_int(v, -2 ** 63, 2 ** 63) for v in record)
        _int(position, 0, case.buffers[name].parent.numel())
        _expect(_decodable(torch.tensor([first, second]), case), "a crossing names programs that do not exist")
        checked["crossed"][name] = (position, first, second)
    lane_race = run.get("lane_race", {})
    _expect(isinstance(lane_race, dict) and set(lane_race) <= names, "a lanes' race names other tensors")
    checked["lane_race"] = {}
    for name, record in lane_race.items():
        _expect(isinstance(record, (list, tuple)) and len(record) == 4, "a lanes' race record is malformed")
        position, program, stored, loaded = (_int(v, -2 ** 63, 2 ** 63) for v in record)
        _int(position, 0, case.buffers[name].parent.numel())
        _int(stored, 0, 2 ** 31)
        _int(loaded, 0, 2 ** 31)
        _expect(_decodable(torch.tensor([program]), case), "a lanes' race names a program that does not exist")
        checked["lane_race"][name] = (position, program, stored, loaded)
    # The kernel's early_config_prune: what it kept off (a configuration case only), or what it raised
    for key, allowed in (("pruned", pruning is True), ("prune_error", pruning is not None)):
        if run.get(key) is not None:
            _expect(allowed, f"a run says {key} where the kernel's pruner cannot")
            checked[key] = _text(run[key], 300)
    if run.get("constants") is not None:  # another configuration's, where the pruner keeps the first's off
        _expect(pruning is not None and run["constants"] in configurations[1:],
                "a run's constants are none of the configurations'")
        checked["constants"] = dict(run["constants"])
    checked["refill_failed"] = run.get("refill_failed", False)
    _expect(isinstance(checked["refill_failed"], bool), "a second run's failure is not a flag")
    refilled = run.get("refilled", {})
    _expect(isinstance(refilled, dict) and set(refilled) <= {n for n, b in case.buffers.items() if b.spec.role ==
                                                                "output"}, "a second run returned other tensors")
    checked["refilled"] = {}
    for name, parents in refilled.items():
        _expect(isinstance(parents, (list, tuple)) and 1 <= len(parents) <= 2, "the runs again are malformed")
        checked["refilled"][name] = tuple(_run_again(parent, case.buffers[name]) for parent in parents)
    checked["zero_fill_failed"] = run.get("zero_fill_failed", False)
    _expect(isinstance(checked["zero_fill_failed"], bool), "a second run's failure is not a flag")
    zero_filled = run.get("zero_filled", {})
    _expect(isinstance(zero_filled, dict) and set(zero_filled) <= {n for n, b in case.buffers.items()
                                                                   if b.spec.written}, "a second run returned other tensors")
    checked["zero_filled"] = {name: _run_again(parent, case.buffers[name]) for name, parent in zero_filled.items()}
    checked["error"] = None if run.get("error") is None else _error(run["error"], case, modules)
    again = run.get("variants", [])
    _expect(isinstance(again, list) and len(again) == (len(configurations) - 1 if checked["error"] is None else 0),
            "not one run again for each tuning configuration")
    _expect(pruning is not None or None not in again, "a run again is missing")
    checked["variants"] = [None if other is None else _run(other, order, case, modules, settings)
                           for other in again]
    return checked


def _run_again(parent, buffer):
    """A tensor's parent after a second run of its case, checked to be one (shape, dtype, on the CPU)."""
    _expect(isinstance(parent, torch.Tensor) and parent.shape == buffer.parent.shape and
            parent.dtype == buffer.parent.dtype and parent.device.type == "cpu",
            f"{buffer.name} came back from a run again with the wrong shape, dtype or device")
    return parent


def _decodable(codes, case):
    """Every code is -1 (no program) or (launch index << 32) | linear program of that launch."""
    codes = codes[codes != -1]
    if not codes.numel():
        return True
    if (codes < 0).any():
        return False
    launches, linear = codes >> 32, codes & 0xFFFFFFFF
    if (launches >= len(case.launches)).any():
        return False
    sizes = torch.tensor([launch.programs for launch in case.launches])
    return bool((linear < sizes[launches]).all())


def _error(error, case, modules):
    _expect(isinstance(error, dict) and error.get("kind") in ERROR_KINDS, "an error of an unknown kind")
    checked = {"kind": error["kind"], "message": _text(error.get("message"))}
    program = error.get("program")
    _expect(isinstance(program, (list, tuple)) and 1 <= len(program) <= 3, "an error names no program")
    checked["program"] = [_int(p, 0, 2 ** 31) for p in program]
    checked["launch"] = _int(error.get("launch", 0), 0, len(case.launches))
    if error["kind"] == "out_of_bounds":
        tensor, access, offsets = error.get("tensor"), error.get("access"), error.get("offsets")
        _expect(tensor is None or tensor in case.buffers, "an out-of-bounds error names an unknown tensor")
        _expect(access in ACCESSES, "an out-of-bounds error names an unknown access")
        _expect(isinstance(offsets, list) and all(isinstance(o, float) for o in offsets[:OFFSETS_KEPT]),
                "an out-of-bounds error has malformed offsets")
        checked.update(tensor=tensor, access=access, offsets=offsets[:OFFSETS_KEPT])
    else:
        line, module = error.get("line"), error.get("module")
        _expect(line is None or isinstance(line, int) and not isinstance(line, bool), "a line is not a number")
        _expect(module is None or module in modules, "an error names an unknown module")
        checked.update(line=line, module=module)
    return checked
