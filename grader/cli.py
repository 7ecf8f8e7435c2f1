"""`triton-course`: list the puzzles, check a submission on the CPU, diagnose the environment."""
import argparse
import atexit
import gc
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from .course import CourseError, guessable_seed, load_course
from .pipeline.results import SubmissionError  # not .load, which imports triton: check's sandboxes start first

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + 13  # as a shell reports a command killed by SIGPIPE
GPU_HELP = "the GPU the performance estimate is for: H100 (default), H200 or A100"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="triton-course", description=__doc__)
    parser.add_argument("--course", help="course.yml to use (default: the one of this checkout)")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the puzzles in course order")
    listing.add_argument("--json", action="store_true", help="one JSON object on stdout")
    check = commands.add_parser("check", help="grade a .py file, a notebook or a directory of them on the CPU")
    check.add_argument("path")
    check.add_argument("--puzzle", action="append", metavar="ID", help="grade only this puzzle (repeatable)")
    check.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    check.add_argument("--json", action="store_true", help="one JSON object on stdout")
    check.add_argument("--no-performance", dest="performance", action="store_false",
                       help="skip the estimate of how fast each passing kernel would run on a GPU")
    check.add_argument("--gpu", default="H100", help=GPU_HELP)
    check.add_argument("--fresh", dest="check_cache", action="store_false",
                       help="compile and profile every kernel again, even one unchanged since an earlier check "
                            "(what checks keep is in $TRITON_COURSE_CACHE or ~/.cache/triton-course)")
    commands.add_parser("doctor", help="versions, GPU, and known bad combinations")
    grade = commands.add_parser("grade", help="grade a class: one notebook, .py file or folder per student")
    grade.add_argument("submissions")
    grade.add_argument("--out", required=True, help="the CSV of grades; reports go to <out stem>_feedback/")
    grade.add_argument("--puzzle", action="append", metavar="ID", help="grade only this puzzle (repeatable)")
    grade.add_argument("--assignment", help="inside each student's folder, grade this subfolder (nbgrader layout)")
    grade.add_argument("--hidden-seed", type=int, help="add the hidden cases and inputs of this seed")
    grade.add_argument("--jobs", type=int, help="students graded at once on this machine (default: one per core, "
                                                "and at most one per 8 GiB of memory, each grading process's limit)")
    grade.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="grade on this Dask cluster (started with `dask scheduler` and `dask worker`) instead")
    nbgrader = commands.add_parser("nbgrader", help="nbgrader integration")
    nbgrader_commands = nbgrader.add_subparsers(dest="nbgrader_command", required=True)
    init = nbgrader_commands.add_parser("init", help="write an nbgrader course directory")
    init.add_argument("directory")
    init.add_argument("--assignment", action="append", metavar="NAME=ID,ID",
                      help="an assignment and its puzzles (repeatable; default: one assignment per puzzle)")
    init.add_argument("--seed", type=int, help="seed of the hidden cases used when autograding (default: a random one, "
                                               "which students cannot guess)")
    autograde = nbgrader_commands.add_parser(
        "autograde", help="nbgrader autograde, with the kernels graded in parallel (run it in the course directory)")
    autograde.add_argument("assignment")
    autograde.add_argument("--student", default="*", help="only this student (nbgrader's --student)")
    autograde.add_argument("--force", action="store_true", help="autograde students already autograded again")
    autograde.add_argument("--jobs", type=int, help="notebooks graded at once on this machine, and processes of "
                                                    "nbgrader's bookkeeping (default: one per core)")
    autograde.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="grade the kernels on this Dask cluster")
    bench = commands.add_parser("bench", help="compile, verify and time kernels on a CUDA GPU")
    bench.add_argument("path", help="a submission, or with --class a folder of one submission per student")
    bench.add_argument("--class", dest="whole_class", action="store_true",
                       help="bench every student of PATH (as `grade` grades them); --out gets the list of results")
    bench.add_argument("--assignment", help="with --class: inside each student's folder, this subfolder")
    bench.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="with --class: spread the students over the GPUs of this Dask cluster (one worker per "
                            "GPU, started with --resources GPU=1)")
    bench.add_argument("--puzzle", action="append", metavar="ID", help="bench only this puzzle (repeatable)")
    bench.add_argument("--out", required=True, help="the results JSON (what the leaderboard reads)")
    bench.add_argument("--student", help="the name on the leaderboard (default: the file or folder name)")
    bench.add_argument("--verify-only", action="store_true",
                       help="verify every puzzle's cases on the GPU and time nothing (puzzles without a benchmark too)")
    inspect = commands.add_parser("inspect", help="show the IR, PTX and resources of a kernel, without a GPU")
    inspect.add_argument("path")
    inspect.add_argument("--puzzle", required=True, metavar="ID")
    inspect.add_argument("--target", choices=["sm_80", "sm_90"], help="the compile shown (default: the --gpu's)")
    inspect.add_argument("--gpu", default="H100", help=GPU_HELP)
    leaderboard = commands.add_parser("leaderboard", help="a static page ranking bench results")
    leaderboard.add_argument("results", nargs="+", help="results JSON files written by `triton-course bench`")
    leaderboard.add_argument("--out", required=True, help="the directory of the page")
    args = parser.parse_args(argv)
    if args.command == "check":  # the sandboxes import torch and triton while this process does
        from .pipeline.warm import prestart
        for _ in range(min(os.cpu_count() or 1, len(args.puzzle or ()) or os.cpu_count() or 1)):
            prestart()
    try:
        if args.command == "doctor":
            return _doctor()
        # Importing torch (load_course compiles the references) makes some 200,000 objects that live as long as
        # the command: the cyclic collector would walk them again and again, while they are made and after.
        gc.disable()
        try:
            course = load_course(args.course)
        finally:
            gc.freeze()
            gc.enable()
        if args.command == "list":
            return _list(course, args.json)
        if args.command == "grade":
            return _grade(course, args)
        if args.command == "nbgrader":
            return _nbgrader_init(course, args) if args.nbgrader_command == "init" else _autograde(args)
        if args.command == "bench":
            return _bench(course, args)
        if args.command == "inspect":
            return _inspect(course, args)
        if args.command == "leaderboard":
            return _leaderboard(args)
        return _check(course, args)
    except (CourseError, SubmissionError) as error:
        if getattr(args, "json", False):
            print(json.dumps({"error": str(error)}))
        print(f"triton-course: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader of the output (a pager, `head`) stopped reading. Stop without a traceback, with the status
        # of a command killed by SIGPIPE; what is still buffered for stdout goes nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    finally:
        gc.unfreeze()  # for a caller that goes on (a test), whose objects the collector finalises at its exit


def _list(course, as_json):
    rows = [{"id": p.id, "title": p.title, "points": p.points, "kernel": p.kernel,
             "notebook": str(p.notebook.relative_to(course.root)), "solution": str(p.solution.relative_to(course.root))}
            for p in course.puzzles]
    if as_json:
        print(json.dumps({"title": course.title, "puzzles": rows}, indent=2))
        return EXIT_PASS
    keys = ("id", "title", "points", "kernel", "notebook", "solution")
    table = [keys] + [tuple(f"{row[k]:g}" if k == "points" else str(row[k]) for k in keys) for row in rows]
    widths = [max(len(r[c]) for r in table) for c in range(len(keys))]
    print(course.title)
    for number, row in enumerate(table):
        print(("#  " if number == 0 else f"{number:<3}") + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return EXIT_PASS


def _check(course, args):
    from .pipeline.check_cache import CheckCache, default_folder
    from .pipeline.grade import grade_submission  # imports torch and triton: only for the commands that need them
    from .pipeline.report import to_json, to_text
    # One student's puzzles in parallel on this machine's cores (a class grades its students in parallel instead).
    # A file's siblings are the student's own, as in the notebook, whose kernels may import the .py files beside
    # it (a class folder is `grade`'s, where the file beside one student's is another's).
    path = Path(args.path)
    report = grade_submission(course, path, args.puzzle, args.seed, settings=_estimating_for(args.gpu),
                              modules_from=path.parent if path.is_file() else None,
                              workers=os.cpu_count() or 1,
                              performance=args.performance,
                              check_cache=CheckCache(default_folder()) if args.check_cache else None)
    print(to_json(report) if args.json else to_text(report, f"{course.title}: checking {args.path} on the CPU"))
    return EXIT_PASS if report.passed else EXIT_FAIL


def _estimating_for(gpu):
    """The settings of a command whose performance estimate is for `gpu`."""
    from .pipeline.performance import known_gpu
    from .settings import DEFAULT
    try:
        return replace(DEFAULT, estimate_gpu=known_gpu(gpu))
    except ValueError as error:
        raise SubmissionError(f"--gpu {gpu}: {error}") from None


def _grade(course, args):
    from .classroom.batch import grade_class
    from .classroom.cluster import ClusterError
    from .pipeline.sandbox import conceal
    if args.hidden_seed is not None:  # other processes of this user must not read it in /proc
        conceal({str(args.hidden_seed)})
        _warn_if_guessable(args.hidden_seed)
    for puzzle_id in args.puzzle or ():
        try:
            course.puzzle(puzzle_id)
        except KeyError as error:
            raise SubmissionError(error.args[0]) from None
    if not Path(args.submissions).is_dir():
        raise SubmissionError(f"{args.submissions}: expected a directory with one submission per student")
    try:
        rows = grade_class(course, args.submissions, args.out, args.puzzle, args.hidden_seed, args.assignment,
                           args.jobs, scheduler=args.scheduler)
    except ClusterError as error:
        raise SubmissionError(str(error)) from None
    from .classroom.batch import class_page_path
    print(f"{len(rows)} students graded: {args.out}, reports in {Path(args.out).parent / (Path(args.out).stem + '_feedback')}"
          f", what the class got wrong in {class_page_path(args.out)}")
    return EXIT_PASS


def _warn_if_guessable(seed):
    warning = guessable_seed(seed)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)


def _nbgrader_init(course, args):
    from .classroom.nbgrader import init_course
    assignments = {}
    for spec in args.assignment or ():
        name, _, ids = spec.partition("=")
        if not name or not ids:
            raise SubmissionError(f"--assignment {spec}: expected NAME=ID,ID (e.g. ps1=vector_add,outer_add)")
        for puzzle_id in ids.split(","):
            try:
                course.puzzle(puzzle_id)
            except KeyError as error:
                raise SubmissionError(error.args[0]) from None
        assignments[name] = ids.split(",")
    written = init_course(args.directory, course, assignments or None, args.seed)
    for name, puzzle_ids in written.items():
        print(f"source/{name}: {', '.join(puzzle_ids)}")
    print(f"{args.directory}/nbgrader_config.py written, with the hidden cases' seed: keep it away from students. "
          f"Next: cd {args.directory} && nbgrader generate_assignment NAME")
    _warn_if_guessable(args.seed)
    return EXIT_PASS


def _autograde(args):
    from .classroom.autograde import autograde
    from .classroom.cluster import ClusterError
    try:
        done = autograde(Path.cwd(), args.assignment, args.jobs, args.scheduler, args.force, args.student)
    except ClusterError as error:
        raise SubmissionError(str(error)) from None
    print(f"{done.students} students autograded ({args.assignment}): kernels graded in {done.kernels_s:.0f} s, "
          f"nbgrader's autograde in {done.bookkeeping_s:.0f} s. Next: nbgrader generate_feedback {args.assignment}, "
          "nbgrader export")
    if done.failures:
        print(f"nbgrader could not autograde {len(done.failures)} students: {', '.join(done.failures)}. "
              "autograde_logs/ says why; run the command again once it is fixed", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_PASS


def _bench(course, args):
    from .gpu.bench import bench_submission, write_results
    for puzzle_id in args.puzzle or ():
        try:
            course.puzzle(puzzle_id)
        except KeyError as error:
            raise SubmissionError(error.args[0]) from None
    if args.whole_class:
        return _bench_class(course, args)
    if args.scheduler or args.assignment:
        raise SubmissionError("--scheduler and --assignment bench a class: add --class")
    results = bench_submission(course, args.path, args.puzzle, student=args.student, timed=not args.verify_only)
    write_results(results, args.out)
    _print_bench(results)
    print(f"results: {args.out}")
    return EXIT_PASS if all(p["status"] in ("pass", "no_benchmark") for p in results["puzzles"]) else EXIT_FAIL


def _bench_class(course, args):
    from .classroom.cluster import ClusterError
    from .gpu.class_bench import bench_class
    if args.student:
        raise SubmissionError("--student names one submission: with --class each student is named by their entry")
    if not Path(args.path).is_dir():
        raise SubmissionError(f"{args.path}: expected a directory with one submission per student")
    try:
        results = bench_class(course, args.path, args.out, args.puzzle, args.assignment, args.scheduler,
                              timed=not args.verify_only)
    except ClusterError as error:
        raise SubmissionError(str(error)) from None
    for result in results:
        print(f"{result['student']} ({result['device']['name'] if result['device'] else 'no GPU'})")
        _print_bench(result)
    print(f"{len(results)} students: {args.out}")
    return EXIT_PASS


def _print_bench(results):
    for puzzle in results["puzzles"]:
        line = f"{puzzle['id']:18} {puzzle['status']:12}"
        for timing in puzzle.get("timings", []):
            rate = f"{timing['tflops']:.1f} TFLOP/s" if "tflops" in timing else f"{timing['gbps']:.0f} GB/s"
            line += (f" | {timing['sizes']}: {timing['time_s'] * 1e3:.3f} ms, {rate}, {100 * timing['fraction']:.0f}%"
                     f" of the roofline, {timing['speedup']:.2f}x PyTorch")
        print(line + (f" | {puzzle['reason']}" if puzzle.get("reason") else ""))


def _inspect(course, args):
    from .gpu.inspection import inspect_kernel
    try:
        course.puzzle(args.puzzle)
    except KeyError as error:
        raise SubmissionError(error.args[0]) from None
    settings = _estimating_for(args.gpu)
    from .pipeline.performance import GPUS
    target = int(args.target.removeprefix("sm_")) if args.target else GPUS[settings.estimate_gpu].compute_capability
    print(inspect_kernel(course, args.path, args.puzzle, target, settings))
    return EXIT_PASS


def _leaderboard(args):
    from .gpu.leaderboard import load_results, write_leaderboard
    try:
        results = load_results(args.results)
    except (OSError, ValueError) as error:
        raise SubmissionError(f"cannot read the results: {error}") from None
    print(f"leaderboard: {write_leaderboard(results, args.out)}")
    return EXIT_PASS


def _doctor():
    from .doctor import diagnose_environment
    lines, warnings = diagnose_environment()
    print("\n".join(lines))
    for warning in warnings:
        print(f"warning: {warning}")
    if not warnings:
        print("ok: this environment can grade the course")
    return EXIT_PASS


def run():
    """The `triton-course` command: main(), then an exit that leaves out the interpreter's teardown (torch's
    modules freed one by one: half a second of every command, after its work is done and its output written)."""
    code = main()
    atexit._run_exitfuncs()  # what the interpreter's exit runs first: the warm workers' closing
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = EXIT_BROKEN_PIPE
    os._exit(code)


if __name__ == "__main__":
    run()
