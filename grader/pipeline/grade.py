"""The grading pipeline: load, make the cases, run them in the sandboxed worker, compare, diagnose.

This process never runs the submission: it reads the kernels (load.py), makes the cases and the expected
results (cases.py), has the worker compile and interpret the kernels in a sandbox (sandbox.py, worker.py),
and compares what comes back (compare.py, diagnose.py). A hostile submission can only spoil its own run.
"""
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

from .access import memory_map
from .cases import make_case
from .compare import compare
from .configs import validate_configs
from ..course import CONFIGURATION_CASES_CHECKED, PARSING, with_hidden_cases
from .diagnose import diagnose, hint, replay_code
from .load import MAIN, distinct_blocks, distinct_variants, load_live, load_read, read_submission
from .memcheck import program_name
from .performance import estimate, unavailable
from .protocol import MalformedResult, check_outcome, configs_job, job, read_result
from .results import KINDS, CaseResult, Diagnostic, GradeReport, PuzzleResult
from .sandbox import Ending, run_worker, sandbox_description, sandbox_kind
from .warm import warm_worker
from ..settings import DEFAULT

ENDING_ADVICE = {
    "timeout": "The kernel did not finish in time.",
    "crash": "The process running the kernel died; nothing else was graded in it.",
    "out_of_memory": "The kernel ran out of memory: look for a block shape that grows with the input.",
}


def grade_submission(course, path, puzzle_ids=None, seed=0, settings=DEFAULT, hidden=(), hidden_seed=None,
                     modules_from=None, workers=1, performance=False, check_cache=None):
    """Grade a .py file, a notebook or a directory of them.

    `hidden`: paths the worker must not see. `hidden_seed`: add the instructor's hidden cases (and inputs).
    `modules_from`: the student's folder, whose .py files a lone notebook may import (nbgrader's layout).
    `workers`: sandboxed workers sharing the puzzles (grade_sources). `performance`: estimate how fast each
    passing kernel would run on a GPU (performance.py). `check_cache`: a student's own CheckCache, where what earlier
    checks learned of an unchanged kernel is kept (check_cache.py; never for a class, unused with hidden cases).
    """
    submission = read_submission(path, course, puzzle_ids, settings, modules_from)
    return grade_read(course, submission, puzzle_ids, seed, settings, hidden, hidden_seed, workers, performance,
                      check_cache)


def grade_read(course, submission, puzzle_ids=None, seed=0, settings=DEFAULT, hidden=(), hidden_seed=None,
               workers=1, performance=False, check_cache=None):
    """Grade a Submission already read from the file system (on whatever machine: a class's cluster sends
    it with the task); the arguments are grade_submission's."""
    with PARSING:
        loaded = load_read(submission, course, puzzle_ids, settings)
    sources = {pid: item.source for pid, item in loaded.items() if item.status == "found"}
    puzzles = {pid: course.puzzle(pid) if hidden_seed is None else with_hidden_cases(course.puzzle(pid), hidden_seed)
               for pid in sources}
    graded = grade_sources(course, sources, seed if hidden_seed is None else hidden_seed, settings, hidden=hidden,
                           puzzles=puzzles, workers=workers, performance=performance,
                           check_cache=check_cache if hidden_seed is None else None)
    return GradeReport([_result(course.puzzle(pid), item, graded.get(pid)) for pid, item in loaded.items()],
                       sandbox_kind(), sandbox_description(settings))


def grade_kernel(puzzle, kernel, seed=0, settings=DEFAULT, course=None, pictures=None, progress=None,
                 performance=False):
    """Grade a live kernel object (a notebook's check cell) on every case of the puzzle."""
    return grade_loaded(puzzle, load_kernel(puzzle, kernel, settings), seed, settings, course, pictures, progress,
                        performance)


def load_kernel(puzzle, kernel, settings=DEFAULT):
    """The Loaded of a live kernel object (its KernelSource when it is found)."""
    with PARSING:
        return load_live(kernel, puzzle, settings)


def grade_loaded(puzzle, loaded, seed=0, settings=DEFAULT, course=None, pictures=None, progress=None,
                 performance=False):
    """Grade a live kernel already loaded (load_kernel); the arguments are grade_kernel's."""
    graded = {}
    if loaded.status == "found":
        graded = grade_sources(course, {puzzle.id: loaded.source}, seed, settings, puzzles={puzzle.id: puzzle},
                               pictures=pictures, progress=progress, performance=performance,
                               spare_cores=(os.cpu_count() or 1) > 1)
    return _result(puzzle, loaded, graded.get(puzzle.id))


def _result(puzzle, loaded, graded):
    """The PuzzleResult of a loaded kernel: its grading, or the verdict loading gave."""
    if graded is None:
        graded = PuzzleResult(puzzle.id, puzzle.title, loaded.status if loaded.status != "found" else "error", 0,
                              puzzle.points, diagnostics=loaded.diagnostics)
    graded.source, graded.notes = loaded.path, loaded.notes + graded.notes
    return graded


def grade_sources(course, sources, seed=0, settings=DEFAULT, hidden=(), puzzles=None, pictures=None, progress=None,
                  workers=1, performance=False, spare_cores=False, check_cache=None):
    """{key: PuzzleResult} for {key: KernelSource} (a key is a puzzle id, or anything else with `puzzles`
    mapping it to its puzzle), run in sandboxed workers (a fresh one after a job that ends its worker).

    `pictures`: "failures" or "all" to keep, for the notebook's pictures, which program touched which element.
    `progress`: called with (key, cases done) while the workers run. `workers`: how many run at once (one
    submission's puzzles: a class grades its students in parallel instead). `performance`: profile each puzzle
    with a benchmark at its size too, and estimate a passing kernel's speed on a GPU (or a {puzzle id:
    configuration} to profile those configurations instead of the first the kernel declares). `spare_cores`:
    nothing else keeps this machine's other cores busy (a notebook's check), so a worker compiles in forks.
    `check_cache`: a student's own CheckCache (grade_submission).

    With one worker, one process runs every source in turn: a class's students each cost one fork, not one a
    puzzle. With more, each source goes through the whole pipeline on its own (cases, worker, comparison), so
    that this process makes one puzzle's cases and compares another's while the workers run, and a core that is
    done takes the next source: the largest first (cases times lines of kernel, a rough measure of the work), so
    that no core waits at the end for one that started a large one late.
    """
    puzzles = puzzles or {key: course.puzzle(key) for key in sources}
    sources = with_computed_blocks(sources, puzzles, settings, hidden)
    # The blocks the GPU stage may launch the kernel with, checked here too.
    puzzles = {key: sources[key].with_configuration_cases(puzzles[key], CONFIGURATION_CASES_CHECKED)
               for key in sources}
    # Fewer sources than the workers given: the cores no worker takes compile in forks while the cases run.
    spare_cores = spare_cores or len(sources) < workers

    def grade(keys):
        cases = {key: [make_case(puzzles[key], i, seed) for i in range(len(puzzles[key].cases))] for key in keys}
        outcomes = _run_jobs(course, {key: (puzzles[key], sources[key], cases[key]) for key in keys}, settings,
                             hidden, performance, spare_cores, progress, check_cache)
        return {key: _verdict(puzzles[key], sources[key], cases[key], outcomes[key], seed, settings, hidden,
                              pictures, performance) for key in keys}

    def work(key):
        return len(puzzles[key].cases) * sum(text.count("\n") + 1 for text in sources[key].modules.values())

    largest_first = sorted(sources, key=work, reverse=True)
    batches = [largest_first] if workers == 1 else [[key] for key in largest_first]
    graded = {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(sources)))) as pool:
        for results in pool.map(grade, batches):
            graded.update(results)
    return {key: graded[key] for key in sources}


def with_computed_blocks(sources, puzzles, settings, hidden=()):
    """`sources` with what the tuning configurations each computes give (KernelSource.configs_computed:
    itertools.product, a function of several statements), evaluated by a sandboxed worker and checked against the
    puzzle, as the statically read ones give it: their blocks as configured_blocks (configuration cases), the first's
    values of the kernel's own parameters as the constants every case runs with, and each other's as a variant every
    case runs again with. Where they cannot be evaluated or are invalid, nothing: the check says so in the estimate,
    and the GPU stage refuses them."""
    computed = {key: source for key, source in sources.items() if source.configs_computed}
    if not computed:
        return sources
    requests = {key: configs_job(f"job{number}", puzzles[key], source, settings)
                for number, (key, source) in enumerate(computed.items())}
    answers = _ask_worker(list(requests.values()), {request["id"]: [] for request in requests.values()}, settings,
                          hidden)
    given = {}
    for key, request in requests.items():
        answer = answers[request["id"]]
        if not isinstance(answer, dict) or "configs" not in answer:
            continue
        valid, _ = validate_configs(puzzles[key], answer["configs"], computed[key].params)
        if not valid:
            continue
        constants = [dict(config["constants"]) for config in valid]
        given[key] = replace(computed[key], tuned=constants[0],
                             variants=tuple(distinct_variants(constants[0], constants[1:])),
                             configured_blocks=distinct_blocks(puzzles[key], [config["kwargs"] for config in valid]))
    return {key: given.get(key, source) for key, source in sources.items()}


def _verdict(puzzle, source, cases, outcome, seed, settings, hidden, pictures, performance):
    """The PuzzleResult of a job's outcome, or of the Ending or MalformedResult that took its place."""
    if isinstance(outcome, Ending):
        message = outcome.message
        if any(spec.hidden for spec in puzzle.cases):  # what the worker printed may tell of the hidden cases
            message = (message.split("\n", 1)[0] + " (what it printed is withheld: hidden cases were among its "
                       "cases; `triton-course check` shows it for the public ones)")
        return _error(puzzle, outcome.kind, f"{message}\n{ENDING_ADVICE[outcome.kind]}")
    if isinstance(outcome, MalformedResult):
        return _error(puzzle, "crash", f"the worker's result is malformed: {outcome}. {MALFORMED}")

    def in_order(indices):
        return _in_order(puzzle, source, cases, indices, outcome.get("resources"), settings, hidden)
    return _puzzle_result(puzzle, source, outcome, seed, settings, pictures, performance, in_order)


def _run_jobs(course, items, settings, hidden=(), performance=False, spare_cores=False, progress=None,
              check_cache=None):
    """{key: the checked outcome of its job, or its Ending, or the MalformedResult that says why what came back
    was not used} for {key: (puzzle, KernelSource, cases)}, run in turn by one worker forked from a warm one."""
    # The worker's file names say nothing of the keys.
    requests = {key: job(f"job{number}", puzzle, source, cases, settings, performance, spare_cores)
                for number, (key, (puzzle, source, cases)) in enumerate(items.items())}
    # The worker reads, of the course, the entries of the puzzles it profiles: a check of a kernel is recalled
    # while other puzzles' entries change.
    recalled = {key: check_cache.recall(request, course.text_for([items[key][0].id]) if "profile" in request
                                        else None)
                for key, request in requests.items()} if check_cache else {}
    profiled = [items[key][0].id for key, request in requests.items() if "profile" in request]  # not recalled
    shared = {"course": course.text_for(profiled), "course_path": str(course.path)} if profiled else None
    keys = {request["id"]: key for key, request in requests.items()}
    report = progress and (lambda job_id, done: progress(keys[job_id], done))
    answers = _ask_worker(list(requests.values()), {r["id"]: items[key][2] for key, r in requests.items()},
                          settings, hidden, report, shared)
    outcomes = {key: answers[request["id"]] for key, request in requests.items()}
    for key, outcome in outcomes.items():
        if key in recalled and not isinstance(outcome, (Ending, MalformedResult)):
            recalled[key].complete(outcome)
    return outcomes


def _ask_worker(requests, cases, settings, hidden, progress=None, shared=None):
    """{job id: its checked outcome, or its Ending, or the MalformedResult that says why what came back was not
    used} for `requests` run in turn by sandboxed workers forked from a warm one; `cases`: {job id: its cases}."""
    answers = {}
    with warm_worker(settings, hidden) as warm:
        scratch = warm.folder()
        endings = run_worker(requests, scratch, settings, hidden, progress=progress, warm=warm, shared=shared)
        for request in requests:
            if request["id"] in endings:
                answers[request["id"]] = endings[request["id"]]
                continue
            try:
                answers[request["id"]] = check_outcome(
                    read_result(Path(scratch) / "results" / f"{request['id']}.pt", settings), request,
                    cases[request["id"]], settings)
            except MalformedResult as error:
                answers[request["id"]] = error
    return answers


def _in_order(puzzle, source, cases, indices, resources, settings, hidden):
    """{case index: run} of the cases at `indices` (of `cases`) run again with their programs in order, by a
    worker that skips the compiles an earlier one passed; {} if that worker fails (the cases failed anyway)."""
    chosen = [cases[i] for i in indices]
    request = job("job", puzzle, source, chosen, settings, order="sequential")
    request["compiled"] = {"resources": resources}
    outcome = _ask_worker([request], {"job": chosen}, settings, hidden)["job"]
    if isinstance(outcome, (Ending, MalformedResult)):
        return {}
    return dict(zip(indices, outcome["cases"]))


def estimate_source(puzzle, source, course, settings=DEFAULT, config=None):
    """How fast a kernel (a KernelSource) whose cases pass would run on a GPU (Performance.to_dict()), made by a
    worker of its own that runs no case: a notebook's check shows its verdict first, and this when it comes.
    `config`: one of its tuning configurations (Performance.tuning) to estimate, instead of the first."""
    performance = True if config is None else {puzzle.id: config}
    outcome = _run_jobs(course, {puzzle.id: (puzzle, source, [])}, settings, performance=performance)[puzzle.id]
    if isinstance(outcome, (Ending, MalformedResult)):
        why = outcome.message if isinstance(outcome, Ending) else f"its result is malformed: {outcome}"
        return unavailable(puzzle, settings.estimate_gpu, f"the estimate's worker failed ({why})").to_dict()
    if outcome.get("profile") is None:
        return unavailable(puzzle, settings.estimate_gpu, "the worker sent no profile").to_dict()
    return _estimate(puzzle, source, outcome["profile"], settings.estimate_gpu, config)


def _estimate(puzzle, source, profile, gpu, chosen=None):
    """performance.estimate's Performance.to_dict() for a KernelSource; one that fails is reported as unavailable,
    never in place of the puzzle's verdict, and so is one of tuning configurations the GPU stage refuses (it would
    be of a launch that never comes: `bench` reports the kernel as an error)."""
    refused = list(source.config_problems) or validate_configs(puzzle, profile.get("configs"), source.params)[1]
    if refused and chosen is None:
        return unavailable(puzzle, gpu, "the GPU stage refuses the kernel's tuning configurations: "
                           + "; ".join(refused)).to_dict()
    try:
        return estimate(puzzle, source.params, _where_written(profile, source), gpu, chosen=chosen).to_dict()
    except Exception as error:
        return unavailable(puzzle, gpu, f"the estimate failed ({type(error).__name__}: {error})"[:500]).to_dict()


def _where_written(profile, source):
    """The profile with each line of a rebuilt module told as where the student wrote it ('layer_norm.py line 13',
    'notebook.ipynb cell 4, line 7'): the rebuilt modules leave out docstrings and comments."""
    written = dict(profile)
    for key in ("sites", "dots", "reductions"):
        written[key] = [{**{name: value for name, value in entry.items() if name != "module"},
                         "line": None if entry["line"] is None else
                         source.describe_line(entry["line"], entry.get("module") or MAIN)}
                        for entry in profile.get(key, ())]
    return written


MALFORMED = "Nothing the worker said about this puzzle was used."


def module_stopped_message(source, raised):
    """Why the kernel's module could not be used, from what a sandbox said stopped it (worker.module_stopped)."""
    where = (f" at {source.describe_line(raised['line'], raised['module'])}: "
             f"{source.line_text(raised['line'], raised['module'])}" if raised["line"] else "")
    return f"{source.kernel}'s host code stopped{where}\n{raised['message']}"


def _error(puzzle, kind, message):
    return PuzzleResult(puzzle.id, puzzle.title, "error", 0, puzzle.points, diagnostics=[Diagnostic(kind, message)])


def _puzzle_result(puzzle, source, outcome, seed, settings, pictures=None, performance=False, in_order=None):
    """The PuzzleResult of a worker's checked outcome. `in_order(case indices)`: {index: run} of those cases run
    again with their programs in order, asked for the public cases that fail with their programs shuffled: where
    the sequential run passes, the kernel depends on the order (a hidden case's diagnostics say less)."""
    if outcome.get("module_raised"):
        return _error(puzzle, "load_error", module_stopped_message(source, outcome["module_raised"]))
    if outcome["compile"]:
        diagnostics = [Diagnostic("compile", _compile_message(puzzle, source, problem))
                       for problem in outcome["compile"]]
        return PuzzleResult(puzzle.id, puzzle.title, "fail", 0, puzzle.points, diagnostics=diagnostics)
    runs = list(outcome["cases"])
    checked = [run_case(puzzle, index, source, run, seed, settings, run.get("constants"), True)
               for index, run in enumerate(runs)]
    for index, run in enumerate(runs):  # right with the first tuning configuration's constants: with the others'?
        for variant, again in zip(source.variants, run["variants"] if not checked[index][0] else ()):
            if again is None:  # the kernel's pruner keeps every configuration giving these off the case
                continue
            diagnostics, case = run_case(puzzle, index, source, again, seed, settings, variant)
            if diagnostics:
                checked[index], runs[index] = (diagnostics, case), again
                break
    # A case whose own run failed (not one with another configuration's constants), run again in order
    shuffled = [index for index, (diagnostics, case) in enumerate(checked) if diagnostics and
                runs[index] is outcome["cases"][index] and puzzle.cases[index].order == "shuffled" and
                not puzzle.cases[index].hidden]
    reruns = in_order(shuffled) if shuffled and in_order else {}
    order_dependent = {index for index, run in reruns.items()
                       if not run_case(puzzle, index, source, run, seed, settings, run.get("constants"), True)[0]}
    case_results = [_case_result(puzzle, index, source, run, *checked[index], index in order_dependent, pictures)
                    for index, run in enumerate(runs)]
    passed = all(r.status == "pass" for r in case_results)
    result = PuzzleResult(puzzle.id, puzzle.title, "pass" if passed else "fail", score(puzzle, case_results),
                          puzzle.points, cases=case_results, diagnostics=diagnose(puzzle, case_results, source.params),
                          notes=_pruning_notes(puzzle, outcome["cases"]))
    if passed and "profile" in outcome:
        chosen = performance.get(puzzle.id) if isinstance(performance, dict) else None
        result.performance = _estimate(puzzle, source, outcome["profile"], settings.estimate_gpu, chosen)
    return result


def _pruning_notes(puzzle, runs):
    """What the report says of the kernel's early_config_prune: the cases it kept every configuration off (not
    run), or what it raised on the CPU (once)."""
    notes = [f"{spec.name} not run: {run['pruned']} (on a GPU the autotuner never launches them there; `triton-course "
             "bench` checks the output of each configuration it times, at the benchmark's sizes)" for spec, run in zip(puzzle.cases, runs) if "pruned" in run]
    error = next((run["prune_error"] for run in runs if "prune_error" in run), None)
    if error:
        notes.append(f"the kernel's early_config_prune raised {error} on the CPU: every tuning configuration ran on "
                     "every case")
    return notes


def score(puzzle, case_results):
    """Partial credit: the points of every group of cases that all pass."""
    failed = {spec.group for spec, result in zip(puzzle.cases, case_results) if result.status != "pass"}
    return sum(points for group, points in puzzle.groups.items() if group not in failed)


def _compile_message(puzzle, source, problem):
    targets = " and ".join(f"sm_{t}" for t in problem["targets"])
    launch = ""
    if problem["case"]:  # the first case's launch compiled; another case's constants do not
        spec = puzzle.cases[problem["case"]]
        if spec.hidden:  # the compiler's message would show the hidden case's blocks
            return (f"the GPU compiler ({targets}) rejects the kernel as a hidden case launches it, with blocks "
                    "that fit its sizes; its sizes stay hidden. Try the public cases' launch with larger sizes.")
        launch = f" as the case '{spec.name}' launches it ({spec.describe()})"
    where = ": "
    if problem["line"]:
        module = problem["module"] or MAIN
        where = (f", at {source.describe_line(problem['line'], module)}: "
                 f"{source.line_text(problem['line'], module)}\n")
    return (f"the GPU compiler ({targets}) rejects the kernel{launch}{where}{problem['message']}"
            f"{hint(problem['message'])}")


def _case_result(puzzle, index, source, run, diagnostics, case, order_dependent, pictures):
    if order_dependent:
        diagnostics.insert(0, Diagnostic("order_dependent", (
            "This case passes when programs run in order 0, 1, 2, ... but fails in a shuffled order. On a GPU "
            "programs run in any order and at the same time: no program may depend on another one having "
            "run first."), puzzle.cases[index].name))
    spec = puzzle.cases[index]
    if spec.hidden:
        diagnostics = [Diagnostic(d.kind, _hidden_message(d.kind), d.case) for d in diagnostics]
    memory = memory_map(case, run["error"]) if pictures and (diagnostics or pictures == "all") else None
    replay = replay_code(puzzle, case, diagnostics, source.kernel, source.params) if diagnostics else None
    description = spec.describe() + (" (not run: the kernel's early_config_prune keeps these blocks off these sizes)"
                                     if run.get("pruned") else "")
    return CaseResult(spec.name, description, "fail" if diagnostics else "pass", diagnostics, replay, memory)


def _hidden_message(kind):
    """What a student learns of a failing hidden case: the kind of failure, nothing that gives its sizes or
    inputs away (a count of elements, an index, a program, what the kernel printed)."""
    return (f"{KINDS[kind][0].upper()}{KINDS[kind][1:]} in a case you have not seen; its sizes and values stay "
            "hidden. Where the public cases pass, look for what only other sizes show: a size that is not a "
            "multiple of the block, one smaller than a block, one that needs more programs.")


def run_case(puzzle, index, source, run, seed, settings, constants=None, instead_of_first=False):
    """(diagnostics, case) of one run of a case: the worker's memory put back into the case, then compared.
    `constants`: the kernel's own parameters, as the tuning configuration the run took them from gives them
    (`instead_of_first`: the case's own run, with the first configuration's kept off it by the kernel's pruner)."""
    case = make_case(puzzle, index, seed)
    case.constants = dict(constants or {})
    for name, buffer in case.buffers.items():
        buffer.parent.copy_(run["parents"][name])
        buffer.writers = np.asarray(run["writers"][name].numpy(), dtype=np.int64)
        buffer.readers = np.asarray(run["readers"][name].numpy(), dtype=np.int64)
        buffer.race = tuple(run["race"][name]) if name in run["race"] else None
        buffer.read_unwritten = tuple(run["read_unwritten"][name]) if name in run["read_unwritten"] else None
        buffer.refilled = run.get("refilled", {}).get(name, ())
        buffer.refill_failed = run.get("refill_failed", False)
        buffer.zero_filled = run.get("zero_filled", {}).get(name)
        buffer.zero_fill_failed = run.get("zero_fill_failed", False)
        buffer.crossed = run.get("crossed", {}).get(name)
        buffer.lane_race = run.get("lane_race", {}).get(name)
        buffer.loads = int(run["loads"][name])
        buffer.repeated = int(run["repeated"][name])
    error = run["error"]
    if run.get("pruned"):
        return [], case  # no program ran: the kernel's pruner keeps the configuration off this case
    if error is not None:
        message = error["message"]
        if error.get("line"):
            module = error["module"] or MAIN
            program = program_name(tuple(error["program"]), case.launches[0].dims)
            message = (f"program {program} raised at {source.describe_line(error['line'], module)}: "
                       f"{source.line_text(error['line'], module)}\n{message}{hint(message)}")
        program = tuple(error["program"]) + (0,) * (3 - len(error["program"]))
        diagnostics = [Diagnostic(error["kind"], message, case.name, (error["launch"], program))]
    else:
        diagnostics = compare(case, settings)
    if diagnostics and run["printed"]:  # what the kernel printed helps to see why
        diagnostics[0].message += f"\nThe kernel printed:\n{run['printed'].rstrip()}"
    if diagnostics and constants is not None:  # another configuration's constants than the first's
        given = [f"{name}={value!r}" for name, value in case.constants.items()] + [
            f"{name} left at its default" for name in source.tuned if name not in case.constants]
        why = ("the kernel's early_config_prune keeps the first configuration off this case" if instead_of_first
               else "the case passes with the first's")
        diagnostics[0].message = (f"With {', '.join(given)}, as another of the kernel's tuning configurations gives "
                                  f"{'it' if len(given) == 1 else 'them'} (the autotuner may launch any of "
                                  f"them on a GPU; {why}): {diagnostics[0].message}")
    return diagnostics, case
